import "server-only";
import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, type Messages, messagesStateReducer } from "@langchain/langgraph";
import type { z } from "zod";
import type { policyFinding } from "@/lib/contract/questions";
import { lastValue } from "../kit/channels";

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
  /** Already refunded for the order (by other decisions) when the policy looked; absent in older checkpoints. */
  refundedCents?: number;
}

/** Who decided what about the refund. `amountCents` is 0 for a rejection. */
export interface RefundDecision {
  decision: "approve" | "reject" | "approve_partial";
  amountCents: number;
  /** Internal: kept with the decision, never sent to the customer. */
  note?: string;
  /** What the operator wrote to the customer: the only operator text the reply email carries. */
  customerMessage?: string;
  decidedBy: "policy" | "operator";
  /** The operator's id when the runtime passed one (`configurable.operator_id`). */
  operatorId?: string;
  /** The decision that authorized it (`decisionRef`): the approval's interrupt, or the policy step. The refund's
   * idempotency key derives from it. Absent in checkpoints written before effects had keys of their own. */
  ref?: string;
}

/** How the money goes back: to the order's payment method, or as store credit. */
export type RefundMethod = "original_payment" | "store_credit";

/**
 * The refund as recorded in the `refunds` table, with its payment intent. `status` is what the graph knows: the
 * payment is queued; the dispatcher delivers it afterwards (the thread view shows the effect's live status).
 */
export interface RefundSummary {
  id: string;
  orderId: string;
  amountCents: number;
  currency: string;
  method: RefundMethod;
  approvedBy: string;
  createdAt: string;
  /** The payment intent (`effects` row) that pays it. */
  effectId: string;
  status: "queued";
  /**
   * A person pays it, not the provider (Stripe without the order's payment or customer on record): the customer is
   * told a member of the team does it. Absent in checkpoints from before it was known: the provider pays.
   */
  byPerson?: boolean;
}

/**
 * An approved refund the ledger refused: other decisions' refunds of the order left less than it to refund (kept in
 * the `refund` channel, so the graph's structure — its channels — stays that of version 1).
 */
export interface RefundRefusal {
  status: "refused";
  orderId: string;
  /** The approved amount that was refused. */
  amountCents: number;
  currency: string;
  refundedCents: number;
  refundableCents: number;
}

/** The customer reply: drafted by write_reply, replaced by the operator's edit when they send an edited version. */
export interface ReplyDraft {
  subject: string;
  body: string;
  /** The confirm_email decision that approved this revision for sending (`decisionRef`); unset on a draft. */
  approvedBy?: string;
}

/**
 * What became of the reply: queued for delivery (the outbox row and its delivery intent; the thread view shows the
 * effect's live status — never `sent` before the SMTP server took it) or deliberately not sent.
 */
export interface EmailResult {
  status: "queued" | "not_sent";
  outboxId?: string;
  effectId?: string;
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
  /** The refund recorded (queued for payment), or the ledger's refusal of an approved one. */
  refund: lastValue<RefundSummary | RefundRefusal | null>(() => null),
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
