import "server-only";
import { randomUUID } from "node:crypto";
import { count, eq, sql, sum } from "drizzle-orm";
import { type Effect, orders, type Refund, refunds } from "../schema";
import type { Queryable } from "../tx";
import { insertEffect } from "./effects";

/**
 * The key of a refund: the decision that authorized it (an approval's interrupt, or the policy step that approved
 * by itself). The same decision re-run (a resume, a crash recovery) finds its own refund; another decision on the
 * same order — a second partial refund — is a refund of its own.
 */
export function refundIdempotencyKey(decisionRef: string): string {
  return `refund:${decisionRef}`;
}

/** What recording a refund came to. */
export type RecordRefundResult =
  /** Recorded now, or found under its key (this decision's own refund, recorded by an earlier attempt). */
  | { ok: true; refund: Refund; effect: Effect }
  /** Refused: it would take the order's refunds above its total (another decision refunded it meanwhile). */
  | { ok: false; refundedCents: number; refundableCents: number };

/**
 * Record an authorized refund and its payment intent, exactly once per decision. In one transaction with the order
 * row locked (`FOR UPDATE`, so concurrent refunds of one order serialize): the refund already recorded under the key
 * is returned as it is; otherwise the sum of the order's refunds plus this one must stay within the order total, and
 * the refund row and its `payment` effect are inserted together. Nothing leaves the process here: the dispatcher
 * pays it afterwards.
 */
export async function recordRefund({
  db,
  decisionRef,
  orderId,
  threadId,
  amountCents,
  currency,
  method,
  approvedBy,
}: {
  db: Queryable;
  decisionRef: string;
  orderId: string;
  threadId: string;
  amountCents: number;
  currency: string;
  method: "original_payment" | "store_credit";
  approvedBy: string;
}): Promise<RecordRefundResult> {
  const idempotencyKey = refundIdempotencyKey(decisionRef);
  return db.transaction(async (tx) => {
    const [order] = await tx
      .select({ amountCents: orders.amountCents })
      .from(orders)
      .where(eq(orders.id, orderId))
      .for("update");
    if (!order) throw new Error(`recordRefund: no order ${orderId}`);
    const [own] = await tx.select().from(refunds).where(eq(refunds.idempotencyKey, idempotencyKey));
    const refund = own ?? (await insertWithinTotal());
    if ("ok" in refund) return refund;
    const effect = await insertEffect({
      db: tx,
      intent: {
        idempotencyKey,
        threadId,
        kind: "payment",
        recordId: refund.id,
        payload: {
          refundId: refund.id,
          orderId,
          amountCents: refund.amountCents,
          currency: refund.currency,
          method: refund.method,
        },
      },
    });
    return { ok: true as const, refund, effect };

    async function insertWithinTotal(): Promise<Refund | RecordRefundResult> {
      const refundedCents = await sumRefundsForOrder({ db: tx, orderId });
      const refundableCents = Math.max(0, (order?.amountCents ?? 0) - refundedCents);
      if (amountCents > refundableCents) return { ok: false, refundedCents, refundableCents };
      const [inserted] = await tx
        .insert(refunds)
        .values({
          id: randomUUID(),
          idempotencyKey,
          orderId,
          threadId,
          amountCents,
          currency,
          method,
          approvedBy,
        })
        .returning();
      if (!inserted) throw new Error(`recordRefund: nothing inserted under ${idempotencyKey}`);
      return inserted;
    }
  });
}

/** How many refunds exist for an order. */
export async function countRefundsForOrder({
  db,
  orderId,
}: {
  db: Queryable;
  orderId: string;
}): Promise<number> {
  const [row] = await db.select({ n: count() }).from(refunds).where(eq(refunds.orderId, orderId));
  return row?.n ?? 0;
}

/** Total already refunded for an order, in minor units. */
export async function sumRefundsForOrder({
  db,
  orderId,
}: {
  db: Queryable;
  orderId: string;
}): Promise<number> {
  const [row] = await db
    .select({ total: sum(refunds.amountCents).mapWith(Number) })
    .from(refunds)
    .where(eq(refunds.orderId, orderId));
  return row?.total ?? 0;
}

/** The refunds recorded for an order, oldest first. */
export async function listRefundsForOrder({
  db,
  orderId,
}: {
  db: Queryable;
  orderId: string;
}): Promise<Refund[]> {
  return db.select().from(refunds).where(eq(refunds.orderId, orderId)).orderBy(refunds.createdAt);
}

/** The refunds recorded on a thread, oldest first. */
export async function listRefundsForThread({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<Refund[]> {
  return db
    .select()
    .from(refunds)
    .where(eq(refunds.threadId, threadId))
    .orderBy(refunds.createdAt, sql`${refunds.id}`);
}
