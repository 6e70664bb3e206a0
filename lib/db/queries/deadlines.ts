import "server-only";
import { and, asc, eq, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { SlaPolicyView } from "@/lib/contract/views/settings";
import { decisions, slaPolicies } from "../schema";
import type { Queryable } from "../tx";
import { rowSealer } from "../vault";
import { openedDecisions, TIMER_ACTION } from "./decisions";

export { TIMER_ACTION };

/** An item that just became overdue and was escalated by this call. */
export interface EscalatedItem {
  interruptId: string;
  threadId: string;
  action: string;
  title: string | null;
  amountCents: number | null;
  currency: string | null;
  dueAt: string;
}

/**
 * Escalate overdue pending decisions, at most `limit`: `escalated_at` is set by compare-and-set (`IS NULL`), rows
 * another transaction is escalating are skipped (`SKIP LOCKED`), so each item escalates exactly once whichever
 * instance gets to it. Runs inside the caller's transaction (the audit and the notifications go with it).
 */
export async function escalateOverdue({ db, limit = 100 }: { db: Queryable; limit?: number }) {
  const result: unknown = await db.execute(sql`
    UPDATE ${decisions} SET escalated_at = now()
    WHERE interrupt_id IN (
      SELECT interrupt_id FROM ${decisions}
      WHERE status = 'pending' AND due_at <= now() AND escalated_at IS NULL AND action <> ${TIMER_ACTION}
      ORDER BY due_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    AND escalated_at IS NULL
    RETURNING interrupt_id AS "interruptId", thread_id AS "threadId", action, title,
      amount_cents AS "amountCents", currency, to_char(due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "dueAt"`);
  // node-postgres answers { rows }, PGlite too; be lenient about either shape.
  const items = (
    Array.isArray(result) ? result : (result as { rows: EscalatedItem[] }).rows
  ) as EscalatedItem[];
  // The title is sealed under the thread's key (lib/db/queries/decisions.ts): opened for the notifications.
  return openedDecisions(db, items);
}

/** Timers whose time is up and that nobody answered yet (oldest first); a timer refused once is left to a person. */
export async function listDueTimers({ db, limit = 50 }: { db: Queryable; limit?: number }) {
  return db
    .select({ interruptId: decisions.interruptId, threadId: decisions.threadId })
    .from(decisions)
    .where(
      and(
        sql`${decisions.status} = 'pending'`,
        eq(decisions.action, TIMER_ACTION),
        isNull(decisions.expiryError),
        lte(decisions.dueAt, sql`now()`),
      ),
    )
    .orderBy(asc(decisions.dueAt))
    .limit(limit);
}

/** Escalated pending decisions whose expiry answer is still to be applied (oldest due first). */
export async function listExpiring({ db, limit = 50 }: { db: Queryable; limit?: number }) {
  return db
    .select({
      interruptId: decisions.interruptId,
      threadId: decisions.threadId,
      action: decisions.action,
      expiryAnswer: decisions.expiryAnswer,
    })
    .from(decisions)
    .where(
      and(
        sql`${decisions.status} = 'pending'`,
        isNotNull(decisions.escalatedAt),
        isNotNull(decisions.expiryAnswer),
        isNull(decisions.expiryError),
        lte(decisions.dueAt, sql`now()`),
      ),
    )
    .orderBy(asc(decisions.dueAt))
    .limit(limit);
}

/**
 * Record why an expiry answer was refused (it is not tried again; the item stays escalated for a person). The reason
 * is sealed under the thread's key, as the decision's other words (it can repeat the question).
 */
export async function markExpiryFailed({
  db,
  threadId,
  interruptId,
  error,
}: {
  db: Queryable;
  threadId: string;
  interruptId: string;
  error: string;
}) {
  const sealed = (await rowSealer(db, threadId, "mark", "sealed-records")).text(error.slice(0, 500));
  await db
    .update(decisions)
    .set({ expiryError: sealed })
    .where(and(eq(decisions.interruptId, interruptId), isNull(decisions.expiryError)));
}

/** The policy's shape is the browser's (lib/contract/views/settings.ts). */
export type { SlaPolicyView };

export async function listSlaPolicies({ db }: { db: Queryable }): Promise<SlaPolicyView[]> {
  return db
    .select({
      id: slaPolicies.id,
      action: slaPolicies.action,
      minAmountCents: slaPolicies.minAmountCents,
      dueSeconds: slaPolicies.dueSeconds,
      expiryAnswer: slaPolicies.expiryAnswer,
    })
    .from(slaPolicies)
    .orderBy(asc(slaPolicies.action), asc(slaPolicies.minAmountCents));
}

/** Create or replace the policy of (action, minimum amount). Applies to decisions raised from now on. */
export async function upsertSlaPolicy({
  db,
  policy,
  by,
}: {
  db: Queryable;
  policy: Omit<SlaPolicyView, "id">;
  by: string;
}): Promise<SlaPolicyView> {
  const id = `${policy.action}:${policy.minAmountCents}`;
  const [row] = await db
    .insert(slaPolicies)
    .values({ id, ...policy, updatedBy: by })
    .onConflictDoUpdate({
      target: [slaPolicies.action, slaPolicies.minAmountCents],
      set: {
        dueSeconds: policy.dueSeconds,
        expiryAnswer: policy.expiryAnswer,
        updatedBy: by,
        updatedAt: sql`now()`,
      },
    })
    .returning({
      id: slaPolicies.id,
      action: slaPolicies.action,
      minAmountCents: slaPolicies.minAmountCents,
      dueSeconds: slaPolicies.dueSeconds,
      expiryAnswer: slaPolicies.expiryAnswer,
    });
  if (!row) throw new Error("policy upsert returned nothing");
  return row;
}

/** Remove a policy (the default `*` one stays: every kind keeps a deadline). */
export async function deleteSlaPolicy({ db, id }: { db: Queryable; id: string }): Promise<boolean> {
  if (id === "default") return false;
  const rows = await db.delete(slaPolicies).where(eq(slaPolicies.id, id)).returning({ id: slaPolicies.id });
  return rows.length > 0;
}
