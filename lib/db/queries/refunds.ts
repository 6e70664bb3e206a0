import "server-only";
import { randomUUID } from "node:crypto";
import { count, eq, sum } from "drizzle-orm";
import { type Refund, refunds } from "../schema";
import type { Queryable } from "../tx";

/** The business key of a refund: at most one refund per order, whichever run, resume or fork records it. */
export function refundIdempotencyKey(orderId: string): string {
  return `refund:${orderId}`;
}

/**
 * Record the refund for an order, exactly once. In one transaction: insert under the order's idempotency key, or —
 * when a row with that key exists (a resumed, recovered or forked run got here before) — return that row with
 * `duplicate: true` instead of refunding again. Concurrent callers serialize on the unique key.
 */
export async function recordRefund({
  db,
  orderId,
  threadId,
  amountCents,
  currency,
  method,
  approvedBy,
}: {
  db: Queryable;
  orderId: string;
  threadId: string;
  amountCents: number;
  currency: string;
  method: "original_payment" | "store_credit";
  approvedBy: string;
}): Promise<{ refund: Refund; duplicate: boolean }> {
  const idempotencyKey = refundIdempotencyKey(orderId);
  return db.transaction(async (tx) => {
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
      .onConflictDoNothing({ target: refunds.idempotencyKey })
      .returning();
    if (inserted) return { refund: inserted, duplicate: false };
    // Read committed: this statement sees the row whose insert made ours do nothing.
    const [existing] = await tx.select().from(refunds).where(eq(refunds.idempotencyKey, idempotencyKey));
    if (!existing) throw new Error(`recordRefund: no refund under ${idempotencyKey} after a conflict`);
    return { refund: existing, duplicate: true };
  });
}

/** How many refunds exist for an order (0 or 1 while the idempotency key is per order). */
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

/** The refunds recorded for an order (at most one while the idempotency key is per order). */
export async function listRefundsForOrder({
  db,
  orderId,
}: {
  db: Queryable;
  orderId: string;
}): Promise<Refund[]> {
  return db.select().from(refunds).where(eq(refunds.orderId, orderId)).orderBy(refunds.createdAt);
}
