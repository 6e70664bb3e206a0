import "server-only";
import { formatMoney } from "@/lib/contract/wire";
import type { OrderSnapshot, PolicyFinding, PolicyResult } from "./state";

/** Refunds up to this amount (minor units) may be approved without a human. */
export const AUTO_APPROVE_LIMIT_CENTS = 5000;
/** Refund requests later than this after the order was placed need a human. */
export const REFUND_WINDOW_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;

/** What the policy looks at. */
export interface PolicyInput {
  order: OrderSnapshot;
  /** Amount asked for; the caller defaults it to the order total. */
  requestedCents: number;
  /** Sum of refunds already recorded for the order. */
  refundedCents: number;
  now: Date;
  /** Who edited the request by a fork, if anyone: an edited request is never approved by the policy alone. */
  editedBy?: string | null;
}

/**
 * The refund policy: deterministic, no I/O. Auto-approve only when every rule passes; otherwise each failing rule is
 * a `block` finding and an operator decides.
 */
export function evaluatePolicy({
  order,
  requestedCents,
  refundedCents,
  now,
  editedBy,
}: PolicyInput): PolicyResult {
  const money = (cents: number) => formatMoney(cents, order.currency);
  const findings: PolicyFinding[] = [];
  const block = (code: string, message: string) => findings.push({ code, severity: "block", message });

  if (requestedCents > AUTO_APPROVE_LIMIT_CENTS) {
    block(
      "over_auto_limit",
      `${money(requestedCents)} is above the automatic approval limit of ${money(AUTO_APPROVE_LIMIT_CENTS)}.`,
    );
  }
  const ageDays = Math.floor((now.getTime() - new Date(order.placedAt).getTime()) / DAY_MS);
  if (ageDays > REFUND_WINDOW_DAYS) {
    block("late_request", `The order was placed ${ageDays} days ago (window: ${REFUND_WINDOW_DAYS} days).`);
  }
  if (order.flagged) block("flagged_order", "Fraud screening flagged this order.");
  if (order.status !== "delivered") block("not_delivered", `The order is ${order.status}, not delivered.`);
  if (refundedCents > 0) {
    block("already_refunded", `${money(refundedCents)} has already been refunded for this order.`);
  }
  if (editedBy) {
    block("edited_request", "The request was edited on a branch of this thread: a person must approve it.");
  }
  const refundable = order.amountCents - refundedCents;
  if (requestedCents > refundable) {
    block(
      "exceeds_order_total",
      `${money(requestedCents)} is more than the refundable ${money(Math.max(refundable, 0))}.`,
    );
  }
  return { autoApprove: findings.length === 0, findings };
}
