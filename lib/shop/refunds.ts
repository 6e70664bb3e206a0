import "server-only";
import { randomUUID } from "node:crypto";
import { count, eq, or, sql, sum } from "drizzle-orm";
import { activeRunTrace } from "@/lib/platform/observability/tracing";
import { type EffectIntent, getEffectByKey, insertEffect } from "../db/queries/effects";
import { spendAuthorization } from "../db/queries/receipts";
import { type Effect, effects, threads } from "../db/schema";
import type { Queryable } from "../db/tx";
import { termsMatch } from "./authority-terms";
import { openOrders } from "./orders";
import { orders, type Refund, refunds } from "./schema";

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
  /**
   * Recorded now, or found under its key (this decision's own refund, recorded by an earlier attempt). `authorized`
   * false: no decision receipt of the thread authorizes this amount to this order — the refund is held as an operator
   * task (its effect `failed`, never paid) rather than paid.
   */
  | { ok: true; refund: Refund; effect: Effect; authorized: boolean }
  /** Refused: it would take the order's refunds above its total (another decision refunded it meanwhile). */
  | { ok: false; reason: "exceeds_total"; refundedCents: number; refundableCents: number }
  /** Refused: a refund with the same purpose is already recorded (under another decision). */
  | { ok: false; reason: "duplicate"; duplicate: Refund };

/** The error of a refund no receipt authorizes: the effect's operator task says it. */
export const NO_RECEIPT = "forbidden:no_receipt";
/** The error of a refund to another customer's order than the thread's. */
export const ELSEWHERE = "forbidden:destination";

/** The email of the customer a thread is about (its order as filed or as found), or null when it names none. */
async function threadCustomerEmail({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<string | null> {
  const [row] = await db
    .select({
      customerEmail: orders.customerEmail,
      customerName: orders.customerName,
      subjectId: orders.subjectId,
    })
    .from(threads)
    .innerJoin(orders, eq(orders.id, threads.customerOrder))
    .where(eq(threads.id, threadId));
  return row ? ((await openOrders(db, [row]))[0]?.customerEmail ?? null) : null;
}

/**
 * Record an authorized refund and its payment intent, exactly once per decision. In one transaction with the order
 * row locked (`FOR UPDATE`, so concurrent refunds of one order serialize): the refund already recorded under the key
 * is returned as it is; a refund with the same `purpose` under another key is refused; otherwise the sum of the
 * order's refunds plus this one must stay within the order total. The refund spends the thread's decision receipt
 * that authorizes exactly this amount to this order, and names its decider (`approved_by`); with none, it is
 * recorded held — its payment effect `failed` with {@link NO_RECEIPT}, an operator task — and never paid. The refund
 * row and its `payment` effect are inserted together, in one statement. Nothing leaves the process here: the
 * dispatcher pays it afterwards (after checking the receipt again).
 */
export async function recordRefund({
  db,
  decisionRef,
  orderId,
  threadId,
  amountCents,
  currency,
  method,
  purpose,
}: {
  db: Queryable;
  decisionRef: string;
  orderId: string;
  threadId: string;
  amountCents: number;
  currency: string;
  method: "original_payment" | "store_credit";
  /** What it is for, when the agent says: one refund per purpose, whatever decides it. */
  purpose?: string;
}): Promise<RecordRefundResult> {
  const idempotencyKey = refundIdempotencyKey(decisionRef);
  return db.transaction(async (tx) => {
    const [locked] = await tx
      .select({
        amountCents: orders.amountCents,
        customerEmail: orders.customerEmail,
        customerName: orders.customerName,
        subjectId: orders.subjectId,
      })
      .from(orders)
      .where(eq(orders.id, orderId))
      .for("update");
    const [order] = locked ? await openOrders(tx, [locked]) : [];
    if (!order) throw new Error(`recordRefund: no order ${orderId}`);
    // Under the order's lock, in one read (a statement of its own, so it sees every refund committed before the lock
    // was granted): this decision's own refund, if an earlier attempt recorded it, the order's refunds, and one of
    // the same purpose.
    const rows = await tx
      .select()
      .from(refunds)
      .where(
        or(
          eq(refunds.idempotencyKey, idempotencyKey),
          eq(refunds.orderId, orderId),
          ...(purpose ? [eq(refunds.purpose, purpose)] : []),
        ),
      );
    const own = rows.find((r) => r.idempotencyKey === idempotencyKey);
    if (own) {
      const effect = await insertEffect({ db: tx, intent: intentOf(own) });
      return { ok: true as const, refund: own, effect, authorized: own.receiptId !== null };
    }
    const same = purpose ? rows.find((r) => r.purpose === purpose) : undefined;
    if (same) return { ok: false as const, reason: "duplicate" as const, duplicate: same };
    const refundedCents = rows.filter((r) => r.orderId === orderId).reduce((n, r) => n + r.amountCents, 0);
    const refundableCents = Math.max(0, order.amountCents - refundedCents);
    if (amountCents > refundableCents)
      return { ok: false as const, reason: "exceeds_total" as const, refundedCents, refundableCents };
    // The money goes to the thread's own customer: an order of another customer than the one the thread is about
    // (as filed, or as its agent found it) is held for an operator, whatever decision asks for it.
    const customer = await threadCustomerEmail({ db: tx, threadId });
    const elsewhere = customer !== null && customer.toLowerCase() !== order.customerEmail.toLowerCase();
    const wanted = { effect: "refund" as const, orderId, amountCents };
    const authority = elsewhere
      ? null
      : await spendAuthorization({
          db: tx,
          threadId,
          effect: "refund",
          key: idempotencyKey,
          matches: (terms) => termsMatch("refund", terms, wanted),
        });
    const by = authority ? receiptDecider(authority.receipt) : null;
    // The refund and its payment intent in one statement.
    const refund = {
      id: randomUUID(),
      idempotencyKey,
      orderId,
      threadId,
      amountCents,
      currency,
      method,
      approvedBy: by ?? "nobody: no decision authorized it",
      receiptId: authority?.receipt.id ?? null,
      purpose: purpose ?? null,
    };
    const held = authority
      ? {}
      : {
          status: "failed" as const,
          lastError: elsewhere
            ? `${ELSEWHERE}: ${orderId} is another customer's order than this thread's; held for an operator, not paid`
            : `${NO_RECEIPT}: no decision on this thread authorized ${amountCents} cents to ${orderId}; held for an operator, not paid`,
        };
    // A payment's payload is the money ledger's ids, amount and method, nothing personal: it stays plain (not sealed
    // like other effects' payloads, lib/db/queries/effects.ts), so a refund owed to a customer erased meanwhile is
    // still paid.
    const recorded = tx.$with("refund").as(tx.insert(refunds).values(refund).returning({ id: refunds.id }));
    const [effect] = await tx
      .with(recorded)
      .insert(effects)
      .values({ id: randomUUID(), ...intentOf(refund), ...held, ...activeRunTrace() })
      .onConflictDoNothing({ target: effects.idempotencyKey })
      .returning();
    // Every column of the refund just inserted is known (its created_at is the statement's now(), as the effect's).
    if (effect)
      return {
        ok: true as const,
        refund: { ...refund, createdAt: effect.createdAt },
        effect,
        authorized: authority !== null,
      };
    const [inserted] = await tx.select().from(refunds).where(eq(refunds.idempotencyKey, idempotencyKey));
    const existing = await getEffectByKey({ db: tx, idempotencyKey });
    if (!inserted || !existing) throw new Error(`recordRefund: nothing recorded under ${idempotencyKey}`);
    return { ok: true as const, refund: inserted, effect: existing, authorized: inserted.receiptId !== null };
  });

  function intentOf(
    refund: Pick<Refund, "id" | "amountCents" | "currency" | "method" | "receiptId">,
  ): EffectIntent {
    return {
      idempotencyKey,
      threadId,
      kind: "payment",
      recordId: refund.id,
      receiptId: refund.receiptId,
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

/** Who a receipt names as its decider, for the money ledger: their label (or "policy" for an automatic approval). */
export function receiptDecider(receipt: { body: unknown }): string {
  const by = (receipt.body as { by?: { label?: unknown; id?: unknown } }).by;
  return typeof by?.label === "string" && by.label
    ? by.label
    : typeof by?.id === "string"
      ? by.id
      : "unknown";
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
