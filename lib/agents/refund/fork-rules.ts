import "server-only";
import { z } from "zod";
import { formatMoney } from "@/lib/contract/wire";
import type { Queryable } from "@/lib/db/tx";
import { getOrder } from "@/lib/shop/orders";
import { editableCents, editableMessage, editableOrderRef } from "../kit/channels";

/**
 * What a fork (time travel) may change in the refund agent's state. Only the customer's request — the input a
 * decision is later taken on — is editable; nothing that carries a decision, an amount the operator approved, an
 * order snapshot or a side effect (`decision`, `policy`, `order`, `refund`, `refundMethod`, `reply`, `email`,
 * `messages`, `editedBy`) can be written by a fork. To change a decision, fork from a checkpoint at or before its
 * interrupt and answer it again: the answer goes through the claim, the contract and four-eyes like any other.
 * Unknown keys, wrong types and prototype keys are refused with the field named.
 */
export const refundEditableState = z
  .strictObject({
    customerMessage: editableMessage,
    orderRef: editableOrderRef,
    intent: z
      .enum(["refund", "other"], { error: "must be refund or other" })
      .meta({ title: "What the customer wants (refund or other)" }),
    /** The customer's reason, as shown to the approver. */
    reason: z
      .string({ error: "must be text" })
      .trim()
      .max(2000, "must be at most 2000 characters")
      .meta({ title: "Reason shown to the approver" }),
    /** The amount asked for in cents, or null for the order total. */
    requested: editableCents.meta({
      title: "Amount asked for",
      description: "At most the order's total; empty asks for the whole order.",
      widget: "money",
    }),
  })
  .partial();

export type RefundStateEdit = z.infer<typeof refundEditableState>;

/** The editable fields, for the console's fork form. */
export const REFUND_EDITABLE_FIELDS = Object.keys(refundEditableState.shape) as (keyof RefundStateEdit)[];

/**
 * Nodes a fork may apply its edits "as" (which decides what runs next). Only nodes whose successors reach every
 * decision through the policy check and a human interrupt: re-classify (`classify`) or re-check the order and policy
 * (`lookup_order`). A node after a decision would let the branch continue as if it had been taken.
 */
export const REFUND_FORK_NODES = ["classify", "lookup_order"] as const;

/** The state update that marks a branch as edited by `principalId` (written by the runtime, never by the edit). */
export function markEdited(principalId: string): { editedBy: string } {
  return { editedBy: principalId };
}

/**
 * What a fork's edits may not be, given the state at the checkpoint: the amount asked for is at most the order's total
 * (the order as the state holds it, or as the shop has it when the checkpoint precedes its look-up). A branch that
 * asks for more than was paid is refused before it is made, as the ledger would refuse the refund later.
 */
export async function refundForkLimits({
  db,
  state,
  values,
}: {
  db: Queryable;
  state: Record<string, unknown>;
  values: Record<string, unknown>;
}): Promise<{ field: string; message: string }[]> {
  if (typeof values.requested !== "number") return [];
  const held = state.order as { id?: unknown; amountCents?: unknown; currency?: unknown } | null | undefined;
  const orderId =
    (typeof values.orderRef === "string" && values.orderRef) ||
    (typeof held?.id === "string" ? held.id : null) ||
    (typeof state.orderRef === "string" ? state.orderRef : null);
  if (!orderId) return [];
  const order =
    held?.id === orderId && typeof held.amountCents === "number"
      ? { amountCents: held.amountCents, currency: String(held.currency ?? "EUR") }
      : await getOrder({ db, orderId });
  if (!order || values.requested <= order.amountCents) return [];
  return [
    {
      field: "requested",
      message: `must be at most the order's total, ${formatMoney(order.amountCents, order.currency)}`,
    },
  ];
}
