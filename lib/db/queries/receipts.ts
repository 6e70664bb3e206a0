import "server-only";
import { and, asc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import {
  type DecisionReceipt,
  decisionReceipts,
  type ReceiptAuthorization,
  receiptAuthorizations,
} from "../schema";
import type { Alongside, Queryable } from "../tx";

/*
 * Decision receipts and what they authorize (lib/runtime/runs/receipts.ts makes and checks them). A receipt is written in
 * the transaction that records its decision; an effect that moves money or changes an account spends one of its
 * authorizations in the transaction that records the effect.
 */

/** A receipt to store, with what it authorizes (each an effect and its terms). */
export interface NewReceipt {
  id: string;
  threadId: string;
  interruptId: string | null;
  body: Record<string, unknown>;
  keyId: string;
  signature: string;
  authorizes: { effect: string; terms: Record<string, unknown> }[];
}

/** Store receipts (a receipt already stored under its id is left as it is: a decision has one receipt). */
export async function insertReceipts({
  db,
  receipts,
}: {
  db: Queryable;
  receipts: NewReceipt[];
}): Promise<void> {
  for (const write of receiptInserts({ db, receipts })) await db.execute(write.getSQL());
}

/**
 * The inserts of {@link insertReceipts}, not yet run: to write them in one statement with other writes (data-modifying
 * CTEs alongside the resume run's insert, see `insertRun`). Empty when there is nothing to write.
 */
export function receiptInserts({ db, receipts }: { db: Queryable; receipts: NewReceipt[] }): Alongside[] {
  if (receipts.length === 0) return [];
  const stored = db
    .insert(decisionReceipts)
    .values(
      receipts.map((r) => ({
        id: r.id,
        threadId: r.threadId,
        interruptId: r.interruptId,
        body: r.body,
        keyId: r.keyId,
        signature: r.signature,
      })),
    )
    .onConflictDoNothing({ target: decisionReceipts.id });
  const authorizations = receipts.flatMap((r) =>
    r.authorizes.map((a, idx) => ({
      receiptId: r.id,
      idx,
      threadId: r.threadId,
      effect: a.effect,
      terms: a.terms,
    })),
  );
  return authorizations.length > 0
    ? [stored, db.insert(receiptAuthorizations).values(authorizations).onConflictDoNothing()]
    : [stored];
}

/**
 * Spend one authorization of a thread's receipts for an effect (its idempotency key): the one this key spent before
 * (a re-run of the same effect), else the oldest unspent one of that effect whose terms `matches` accepts. Locked
 * while it is read, so two effects never spend one authorization. Null: nothing on the thread authorizes it.
 */
export async function spendAuthorization({
  db,
  threadId,
  effect,
  key,
  matches,
}: {
  db: Queryable;
  threadId: string;
  effect: string;
  key: string;
  matches: (terms: Record<string, unknown>) => boolean;
}): Promise<{ receipt: DecisionReceipt; authorization: ReceiptAuthorization } | null> {
  const candidates = await db
    .select()
    .from(receiptAuthorizations)
    .where(
      and(
        eq(receiptAuthorizations.threadId, threadId),
        eq(receiptAuthorizations.effect, effect),
        or(isNull(receiptAuthorizations.spentBy), eq(receiptAuthorizations.spentBy, key)),
      ),
    )
    .orderBy(sql`${receiptAuthorizations.spentBy} IS NULL`, asc(receiptAuthorizations.createdAt))
    .for("update");
  const chosen =
    candidates.find((c) => c.spentBy === key) ??
    candidates.find((c) => c.spentBy === null && matches(c.terms as Record<string, unknown>));
  if (!chosen) return null;
  if (chosen.spentBy === null) {
    await db
      .update(receiptAuthorizations)
      .set({ spentBy: key, spentAt: sql`now()` })
      .where(
        and(eq(receiptAuthorizations.receiptId, chosen.receiptId), eq(receiptAuthorizations.idx, chosen.idx)),
      );
  }
  const [receipt] = await db.select().from(decisionReceipts).where(eq(decisionReceipts.id, chosen.receiptId));
  if (!receipt) return null;
  return { receipt, authorization: { ...chosen, spentBy: key } };
}

/** A receipt and the authorization an effect (by its idempotency key) spent of it. */
export async function getSpentAuthority({
  db,
  receiptId,
  key,
}: {
  db: Queryable;
  receiptId: string;
  key: string;
}): Promise<{ receipt: DecisionReceipt; authorization: ReceiptAuthorization } | null> {
  const [receipt] = await db.select().from(decisionReceipts).where(eq(decisionReceipts.id, receiptId));
  if (!receipt) return null;
  const [authorization] = await db
    .select()
    .from(receiptAuthorizations)
    .where(and(eq(receiptAuthorizations.receiptId, receiptId), eq(receiptAuthorizations.spentBy, key)));
  return authorization ? { receipt, authorization } : null;
}

/** A thread's receipts, oldest first, each with its authorizations. */
export async function listThreadReceipts({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<(DecisionReceipt & { authorizations: ReceiptAuthorization[] })[]> {
  const receipts = await db
    .select()
    .from(decisionReceipts)
    .where(eq(decisionReceipts.threadId, threadId))
    .orderBy(asc(decisionReceipts.createdAt), asc(decisionReceipts.id));
  if (receipts.length === 0) return [];
  const authorizations = await db
    .select()
    .from(receiptAuthorizations)
    .where(
      inArray(
        receiptAuthorizations.receiptId,
        receipts.map((r) => r.id),
      ),
    )
    .orderBy(asc(receiptAuthorizations.idx));
  return receipts.map((r) => ({ ...r, authorizations: authorizations.filter((a) => a.receiptId === r.id) }));
}

/** Receipts after `after` (by id), `limit` at a time: what the verify command walks. */
export async function listReceipts({
  db,
  after,
  limit,
}: {
  db: Queryable;
  after: string;
  limit: number;
}): Promise<DecisionReceipt[]> {
  return db
    .select()
    .from(decisionReceipts)
    .where(sql`${decisionReceipts.id} > ${after}`)
    .orderBy(asc(decisionReceipts.id))
    .limit(limit);
}
