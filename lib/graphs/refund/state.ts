import "server-only";
import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, type Messages, messagesStateReducer } from "@langchain/langgraph";
import type { z } from "zod";
import type { policyFinding } from "@/lib/interrupts";
import { lastValue } from "../channels";

/** A policy finding, as shown to the operator (the interrupt contract's shape). */
export type PolicyFinding = z.infer<typeof policyFinding>;

/** JSON snapshot of an `orders` row as the graph saw it (dates as ISO strings, so checkpoints stay plain JSON). */
export interface OrderSnapshot {
  id: string;
  customerName: string;
  customerEmail: string;
  amountCents: number;
  currency: string;
  placedAt: string;
  /** card | paypal | bank_transfer | gift_card */
  paymentMethod: string;
  items: { sku: string; name: string; quantity: number; unitCents: number }[];
  /** delivered | shipped | processing | cancelled */
  status: string;
  flagged: boolean;
}

/** Outcome of the deterministic refund policy. */
export interface PolicyResult {
  autoApprove: boolean;
  findings: PolicyFinding[];
}

/** Who decided what about the refund. `amountCents` is 0 for a rejection. */
export interface RefundDecision {
  decision: "approve" | "reject" | "approve_partial";
  amountCents: number;
  note?: string;
  decidedBy: "policy" | "operator";
  /** The operator's id when the runtime passed one (`configurable.operator_id`). */
  operatorId?: string;
}

/** How the money goes back: to the order's payment method, or as store credit. */
export type RefundMethod = "original_payment" | "store_credit";

/** The refund as recorded in the `refunds` table; `duplicate` when an earlier run had recorded it already. */
export interface RefundSummary {
  id: string;
  orderId: string;
  amountCents: number;
  currency: string;
  method: RefundMethod;
  approvedBy: string;
  createdAt: string;
  duplicate: boolean;
}

/** The customer reply: drafted by write_reply, replaced by the operator's edit when they send an edited version. */
export interface ReplyDraft {
  subject: string;
  body: string;
}

/** What became of the reply: queued in the outbox (`sent`, with its row id) or deliberately not sent. */
export interface EmailResult {
  status: "sent" | "not_sent";
  outboxId?: string;
}

/**
 * The refund agent's state. Everything apart from `messages` is plain JSON; `messages` holds real LangChain
 * messages (the customer's message, the order lookup tool call and its result, the drafted reply).
 */
export const RefundState = Annotation.Root({
  messages: Annotation<BaseMessage[], Messages>({ reducer: messagesStateReducer, default: () => [] }),
  customerMessage: lastValue<string>(() => ""),
  /** `ORD-1234`, upper case. Given by the caller, extracted from the message, or answered by an operator. */
  orderRef: lastValue<string | null>(() => null),
  intent: lastValue<"refund" | "other">(() => "other"),
  reason: lastValue<string>(() => ""),
  /** Amount the customer asked for, in the order's minor units; null = the order total. */
  requested: lastValue<number | null>(() => null),
  order: lastValue<OrderSnapshot | null>(() => null),
  policy: lastValue<PolicyResult | null>(() => null),
  decision: lastValue<RefundDecision | null>(() => null),
  refundMethod: lastValue<RefundMethod | null>(() => null),
  refund: lastValue<RefundSummary | null>(() => null),
  reply: lastValue<ReplyDraft | null>(() => null),
  email: lastValue<EmailResult | null>(() => null),
  /** Who edited this branch's state by a fork (set by the runtime, not editable): the policy never auto-approves an
   * edited request — a person other than the editor must approve it. */
  editedBy: lastValue<string | null>(() => null),
});

/** The full state, as nodes read it and `getState().values` returns it. */
export type RefundStateValue = typeof RefundState.State;
/** A partial state update, as nodes return it and `invoke` takes it. */
export type RefundStateUpdate = typeof RefundState.Update;
