import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import {
  Annotation,
  type BaseCheckpointSaver,
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";

/*
 * A refund-shaped graph for the saver benchmark (the app's real refund graph does not exist yet). No model is
 * called: each node appends the kind of LangChain message a real run would produce (with ids, tool calls and usage
 * metadata), so the `messages` channel grows and is re-serialized at every step, the way it is in production.
 *
 *   classify → lookup_order → policy → human_review (interrupt) → execute_refund → END
 *
 * Five nodes: per thread this is 7 checkpoints (`put`) and 8 `putWrites` (one per task, plus the interrupt and the
 * resume value) over the two invocations.
 */

export interface Order {
  orderId: string;
  customerId: string;
  placedAt: string;
  currency: string;
  lines: { sku: string; title: string; quantity: number; unitPrice: number }[];
  shipping: { carrier: string; tracking: string; deliveredAt: string };
}

export const RefundState = Annotation.Root({
  ...MessagesAnnotation.spec,
  order: Annotation<Order | null>({ reducer: (_a, b) => b, default: () => null }),
  amount: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
  decision: Annotation<"pending" | "approved" | "rejected">({
    reducer: (_a, b) => b,
    default: () => "pending",
  }),
  reason: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
});

type S = typeof RefundState.State;

/** What the human reviewer sees (the interrupt value). */
export interface ReviewRequest {
  orderId: string;
  amount: number;
  currency: string;
  reason: string;
  proposed: "approve" | "reject";
}

/** What the reviewer answers (the resume value). */
export interface ReviewAnswer {
  approve: boolean;
  note: string;
  reviewer: string;
}

const LOREM =
  "I ordered the noise-cancelling headphones three weeks ago and the left ear cup stopped working after two days. " +
  "I already tried resetting them as described in the manual, and charging them overnight, but nothing helps. " +
  "I would like a refund to my original payment method, please.";

let seq = 0;
const id = (prefix: string) => `${prefix}_${(seq++).toString(36)}_${Math.random().toString(36).slice(2, 10)}`;

function usage(input: number, output: number) {
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

function makeOrder(threadId: string): Order {
  return {
    orderId: `ord_${threadId.slice(-8)}`,
    customerId: `cus_${threadId.slice(0, 6)}`,
    placedAt: "2025-05-02T10:14:00.000Z",
    currency: "EUR",
    lines: [
      { sku: "HP-NC-700", title: "Noise-cancelling headphones", quantity: 1, unitPrice: 249.0 },
      { sku: "CASE-HP-01", title: "Hard travel case", quantity: 1, unitPrice: 29.9 },
      { sku: "WAR-2Y", title: "2-year extended warranty", quantity: 1, unitPrice: 19.99 },
    ],
    shipping: { carrier: "DHL", tracking: "JD014600003828312345", deliveredAt: "2025-05-05T16:40:00.000Z" },
  };
}

async function classify(state: S): Promise<Partial<S>> {
  return {
    messages: [
      new AIMessage({
        id: id("msg"),
        content:
          `Intent: refund_request (confidence 0.94, ${state.messages.length} messages read). Product defect ` +
          "reported within the return window; customer asks for a refund to the original payment method.",
        response_metadata: { model: "bench-model", finish_reason: "stop" },
        usage_metadata: usage(812, 41),
      }),
    ],
    reason: "defective_item",
  };
}

async function lookupOrder(
  state: S,
  config: { configurable?: Record<string, unknown> },
): Promise<Partial<S>> {
  const threadId = String(config.configurable?.thread_id ?? "thread");
  const order = state.order ?? makeOrder(threadId);
  const callId = id("call");
  return {
    order,
    messages: [
      new AIMessage({
        id: id("msg"),
        content: "",
        tool_calls: [
          { id: callId, name: "lookup_order", args: { orderId: order.orderId }, type: "tool_call" },
        ],
        usage_metadata: usage(905, 22),
      }),
      new ToolMessage({
        id: id("msg"),
        tool_call_id: callId,
        name: "lookup_order",
        content: JSON.stringify(order),
      }),
    ],
  };
}

async function policy(state: S): Promise<Partial<S>> {
  const amount = (state.order?.lines ?? [])
    .filter((line) => line.sku !== "WAR-2Y")
    .reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
  return {
    amount: Math.round(amount * 100) / 100,
    messages: [
      new AIMessage({
        id: id("msg"),
        content:
          `Policy check: delivered 2025-05-05, within 30-day window; defect claim; warranty line excluded. ` +
          `Proposed refund ${amount.toFixed(2)} EUR. Amount above the 100 EUR auto-approval limit: needs review.`,
        usage_metadata: usage(1204, 57),
      }),
    ],
  };
}

async function humanReview(state: S): Promise<Partial<S>> {
  const answer = interrupt<ReviewRequest, ReviewAnswer>({
    orderId: state.order?.orderId ?? "",
    amount: state.amount,
    currency: state.order?.currency ?? "EUR",
    reason: state.reason,
    proposed: "approve",
  });
  return {
    decision: answer.approve ? "approved" : "rejected",
    messages: [
      new HumanMessage({
        id: id("msg"),
        content: `Reviewer ${answer.reviewer}: ${answer.approve ? "approved" : "rejected"}. ${answer.note}`,
        name: "reviewer",
      }),
    ],
  };
}

async function executeRefund(state: S): Promise<Partial<S>> {
  const callId = id("call");
  const approved = state.decision === "approved";
  return {
    messages: [
      new AIMessage({
        id: id("msg"),
        content: "",
        tool_calls: [
          {
            id: callId,
            name: "issue_refund",
            args: { orderId: state.order?.orderId, amount: state.amount, approved },
            type: "tool_call",
          },
        ],
        usage_metadata: usage(1402, 30),
      }),
      new ToolMessage({
        id: id("msg"),
        tool_call_id: callId,
        name: "issue_refund",
        content: JSON.stringify({
          refundId: id("re"),
          status: approved ? "succeeded" : "skipped",
          amount: state.amount,
          currency: state.order?.currency,
        }),
      }),
      new AIMessage({
        id: id("msg"),
        content: approved
          ? `Hello, we are sorry about the headphones. We have refunded ${state.amount.toFixed(2)} EUR to your ` +
            "original payment method; it should appear within 5-10 business days. You do not need to send the " +
            "item back. Thank you for your patience."
          : "Hello, after review we are unable to refund this order. A specialist will contact you about a repair.",
        usage_metadata: usage(1530, 88),
      }),
    ],
  };
}

export function buildRefundGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(RefundState)
    .addNode("classify", classify)
    .addNode("lookup_order", lookupOrder)
    .addNode("policy", policy)
    .addNode("human_review", humanReview)
    .addNode("execute_refund", executeRefund)
    .addEdge(START, "classify")
    .addEdge("classify", "lookup_order")
    .addEdge("lookup_order", "policy")
    .addEdge("policy", "human_review")
    .addEdge("human_review", "execute_refund")
    .addEdge("execute_refund", END)
    .compile({ checkpointer });
}

export type RefundGraph = ReturnType<typeof buildRefundGraph>;

export function customerMessage(threadId: string): HumanMessage {
  return new HumanMessage({ id: id("msg"), content: `${LOREM} (ticket ${threadId})` });
}

/**
 * One refund thread: invoke until the review interrupt, read the interrupt from the saved state, resume, finish.
 * Throws when the graph does not behave as expected (so a broken saver cannot produce a fast-looking result).
 */
export type ThreadPhase = "invoke" | "getState" | "resume";

export async function runRefundThread(
  graph: RefundGraph,
  threadId: string,
  afterPhase?: (phase: ThreadPhase) => void,
): Promise<void> {
  const config = { configurable: { thread_id: threadId } };
  await graph.invoke({ messages: [customerMessage(threadId)] }, config);
  afterPhase?.("invoke");
  const snapshot = await graph.getState(config);
  afterPhase?.("getState");
  const request = snapshot.tasks.flatMap((task) => task.interrupts)[0]?.value as ReviewRequest | undefined;
  if (!request || request.amount <= 0) throw new Error(`thread ${threadId}: no review interrupt pending`);
  const answer: ReviewAnswer = { approve: true, note: "Defect confirmed from photos.", reviewer: "agent_17" };
  const final = await graph.invoke(new Command({ resume: answer }), config);
  afterPhase?.("resume");
  if (final.decision !== "approved" || final.messages.length < 9) {
    throw new Error(
      `thread ${threadId}: unexpected final state (${final.decision}, ${final.messages.length})`,
    );
  }
}
