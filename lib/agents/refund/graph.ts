import "server-only";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, END, START, StateGraph } from "@langchain/langgraph";
import type { AppDb } from "@/lib/db/open";
import { normalizeOrderRef } from "./classify-rules";
import { confirmEmailNode, executeRefundNode, sendEmailNode } from "./nodes/act";
import { checkPolicyNode, chooseMethodNode, humanReviewNode } from "./nodes/decide";
import { askOrderNode, classifyNode, lookupOrderNode } from "./nodes/intake";
import { writeReplyNode } from "./nodes/reply";
import { RefundState, type RefundStateUpdate, type RefundStateValue } from "./state";

/** The graph's nodes in flow order: they are the AG-UI step names. Interrupting nodes are marked. */
export const REFUND_NODES = [
  "classify",
  "ask_order", // interrupt: input_text
  "lookup_order",
  "check_policy",
  "human_review", // interrupt: refund_approval
  "choose_method", // interrupt: select_option (bank transfer, gift card)
  "execute_refund",
  "write_reply",
  "confirm_email", // interrupt: confirm_email
  "send_email",
] as const;

/** A node (step) name of the refund graph. */
export type RefundNodeName = (typeof REFUND_NODES)[number];

/** What the refund graph is built from; tests pass their own database and model. */
export interface RefundGraphDeps {
  checkpointer: BaseCheckpointSaver;
  db: AppDb;
  model: BaseChatModel;
  /** Chaos testing only (see NodeContext.refundNodeDelayMs). */
  refundNodeDelayMs?: number;
}

function afterClassify(s: RefundStateValue) {
  if (s.orderRef) return "lookup_order";
  // Only a refund needs an order; a general question is answered without one.
  return s.intent === "refund" ? "ask_order" : "write_reply";
}

function afterLookup(s: RefundStateValue) {
  if (s.intent !== "refund") return "write_reply";
  return s.order ? "check_policy" : "ask_order";
}

/**
 * Build the refund agent: classify → (ask_order ⇄ lookup_order) → check_policy → human_review? → choose_method →
 * execute_refund → write_reply → confirm_email → send_email. Rejections skip to write_reply; non-refund messages go
 * from classification (or the order lookup) straight to write_reply; a reply with no recipient the agent may
 * write to waits for a person to send it themselves (confirm_email asks them).
 */
export function buildRefundGraph({ checkpointer, db, model, refundNodeDelayMs }: RefundGraphDeps) {
  const ctx = { db, model, refundNodeDelayMs };
  return (
    new StateGraph(RefundState)
      .addNode("classify", classifyNode(ctx))
      .addNode("ask_order", askOrderNode())
      .addNode("lookup_order", lookupOrderNode(ctx))
      .addNode("check_policy", checkPolicyNode(ctx))
      .addNode("human_review", humanReviewNode())
      .addNode("choose_method", chooseMethodNode())
      .addNode("execute_refund", executeRefundNode(ctx))
      .addNode("write_reply", writeReplyNode(ctx))
      .addNode("confirm_email", confirmEmailNode())
      .addNode("send_email", sendEmailNode(ctx))
      .addEdge(START, "classify")
      .addConditionalEdges("classify", afterClassify, ["lookup_order", "ask_order", "write_reply"])
      .addEdge("ask_order", "lookup_order")
      .addConditionalEdges("lookup_order", afterLookup, ["check_policy", "ask_order", "write_reply"])
      .addConditionalEdges(
        "check_policy",
        (s) => (s.policy?.autoApprove ? "choose_method" : "human_review"),
        ["choose_method", "human_review"],
      )
      .addConditionalEdges(
        "human_review",
        (s) => (s.decision?.decision === "reject" ? "write_reply" : "choose_method"),
        ["write_reply", "choose_method"],
      )
      .addEdge("choose_method", "execute_refund")
      .addEdge("execute_refund", "write_reply")
      // Every reply goes to a person: with no order to write to, confirm_email asks them to reply themselves (a ticket
      // never ends unseen with a draft nobody sends). END stays a declared target: the graph's structure is version 1's.
      .addConditionalEdges("write_reply", () => "confirm_email", ["confirm_email", END])
      .addConditionalEdges("confirm_email", (s) => (s.email?.status === "not_sent" ? END : "send_email"), [
        "send_email",
        END,
      ])
      .addEdge("send_email", END)
      .compile({ checkpointer, name: "refund" })
  );
}

/** The compiled refund graph. */
export type RefundGraph = ReturnType<typeof buildRefundGraph>;

/**
 * The input that starts (or continues) a thread with a customer message. `messageId` becomes the human message's id,
 * so the console and the event log can refer to it; an `orderRef` given here wins over one read from the message.
 */
export function refundGraphInput({
  messageId,
  customerMessage,
  orderRef,
}: {
  messageId: string;
  customerMessage: string;
  orderRef?: string | null;
}): RefundStateUpdate {
  return {
    messages: [new HumanMessage({ id: messageId, content: customerMessage })],
    customerMessage,
    orderRef: normalizeOrderRef(orderRef) ?? null,
  };
}
