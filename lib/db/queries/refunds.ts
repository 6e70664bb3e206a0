import "server-only";
import { randomUUID } from "node:crypto";
import { count, eq, or, sql, sum } from "drizzle-orm";
import { activeRunTrace } from "@/lib/observability/tracing";
import { type Effect, effects, orders, type Refund, refunds } from "../schema";
import type { Queryable } from "../tx";
import { type EffectIntent, getEffectByKey, insertEffect } from "./effects";

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
 * the refund row and its `payment` effect are inserted together, in one statement. Nothing leaves the process here:
 * the dispatcher pays it afterwards.
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
    // Under the order's lock, in one read (a statement of its own, so it sees every refund committed before the lock
    // was granted): this decision's own refund, if an earlier attempt recorded it, and the order's refunds.
    const rows = await tx
      .select()
      .from(refunds)
      .where(or(eq(refunds.idempotencyKey, idempotencyKey), eq(refunds.orderId, orderId)));
    const own = rows.find((r) => r.idempotencyKey === idempotencyKey);
    if (own)
      return {
        ok: true as const,
        refund: own,
        effect: await insertEffect({ db: tx, intent: intentOf(own) }),
      };
    const refundedCents = rows.filter((r) => r.orderId === orderId).reduce((n, r) => n + r.amountCents, 0);
    const refundableCents = Math.max(0, order.amountCents - refundedCents);
    if (amountCents > refundableCents) return { ok: false as const, refundedCents, refundableCents };
    // The refund and its payment intent in one statement.
    const refund = {
      id: randomUUID(),
      idempotencyKey,
      orderId,
      threadId,
      amountCents,
      currency,
      method,
      approvedBy,
    };
    const recorded = tx.$with("refund").as(tx.insert(refunds).values(refund).returning({ id: refunds.id }));
    const [effect] = await tx
      .with(recorded)
      .insert(effects)
      .values({ id: randomUUID(), ...intentOf(refund), ...activeRunTrace() })
      .onConflictDoNothing({ target: effects.idempotencyKey })
      .returning();
    // Every column of the refund just inserted is known (its created_at is the statement's now(), as the effect's).
    if (effect) return { ok: true as const, refund: { ...refund, createdAt: effect.createdAt }, effect };
    const [inserted] = await tx.select().from(refunds).where(eq(refunds.idempotencyKey, idempotencyKey));
    const existing = await getEffectByKey({ db: tx, idempotencyKey });
    if (!inserted || !existing) throw new Error(`recordRefund: nothing recorded under ${idempotencyKey}`);
    return { ok: true as const, refund: inserted, effect: existing };
  });

  function intentOf(refund: Pick<Refund, "id" | "amountCents" | "currency" | "method">): EffectIntent {
    return {
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
    };
  }
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
