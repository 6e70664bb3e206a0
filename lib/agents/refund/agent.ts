import "server-only";
import { sharedContract } from "@/lib/agents/kit/contract";
import { orderTicket } from "@/lib/agents/kit/ticket-fields";
import type { InterruptPayload } from "@/lib/contract/questions";
import { env } from "@/lib/platform/env";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";
import { getChatModel } from "./chat-model";
import { refundActsOnIt, refundDecisionPolicy } from "./decision-policy";
import { sideEffectWarnings } from "./effects";
import {
  markEdited,
  REFUND_EDITABLE_FIELDS,
  REFUND_FORK_NODES,
  refundEditableState,
  refundForkLimits,
} from "./fork-rules";
import { buildRefundGraph, refundGraphInput } from "./graph";

/** The refund agent: classify a ticket, look the order up, apply the policy, ask a person, refund, reply. */
export const refundAgent: AgentDefinition<InterruptPayload> = {
  id: "refund",
  title: "Refund request",
  description: "A customer asks for their money back for an order.",
  version: "1",
  structureHash: "sha256:61d548c43a27bd67",
  interruptNodes: ["ask_order", "human_review", "choose_method", "confirm_email"],
  asks: ["input_text", "select_option", "refund_approval", "confirm_email"],
  // A customer who writes again while the agent works is heard after it, in order: nothing they said is refused.
  multitask: "enqueue",
  build: ({ checkpointer, db }) =>
    buildRefundGraph({
      checkpointer,
      db,
      model: getChatModel(),
      refundNodeDelayMs: env.CHAOS_REFUND_DELAY_MS,
    }),
  intake: orderTicket,
  input: ({ messageId, text, ticket }) =>
    refundGraphInput({ messageId, customerMessage: text, orderRef: orderTicket.order(ticket) }),
  interrupts: sharedContract,
  fork: {
    editable: refundEditableState,
    editableFields: REFUND_EDITABLE_FIELDS,
    asNodes: REFUND_FORK_NODES,
    markEdited,
    limits: refundForkLimits,
  },
  effects: (args) => sideEffectWarnings(args),
  policy: refundDecisionPolicy,
  /** The customer's own words (and what they asked to change to): erased with the customer. */
  personalData: ["customerMessage"],
  actsOnIt: refundActsOnIt,
  context(values) {
    const order = values.order as
      | { id?: unknown; customerName?: unknown; currency?: unknown }
      | null
      | undefined;
    const decision = values.decision as { decision?: unknown; amountCents?: unknown } | null | undefined;
    // Approved and not yet recorded: the question now (how the customer gets it back) is about that amount.
    const approved =
      decision && decision.decision !== "reject" && !values.refund && typeof decision.amountCents === "number"
        ? decision.amountCents
        : null;
    return {
      amount:
        approved !== null && typeof order?.currency === "string"
          ? { amountCents: approved, currency: order.currency }
          : null,
      orderId:
        typeof order?.id === "string"
          ? order.id
          : typeof values.orderRef === "string"
            ? values.orderRef
            : null,
      customerName: typeof order?.customerName === "string" ? order.customerName : null,
    };
  },
};
