import "server-only";
import { randomUUID } from "node:crypto";
import { and, desc, eq, gt, inArray, sql } from "drizzle-orm";
import { isPlausibleId } from "@/lib/contract/params";
import { decisions, type Thread, threadSearch, threads } from "../schema";
import { ticketTerms } from "../search-terms";
import { type Alongside, type Queryable, withAlongside } from "../tx";
import {
  customerSubjectId,
  ensureSubjectKey,
  isSealedJson,
  type KeySource,
  openThreadJson,
  openThreadText,
  primeThreadKey,
  primeThreadKeys,
  SEALED_TEXT,
  threadSubjectId,
  ticketSealer,
} from "../vault";

/**
 * Create a thread for a customer ticket, under a data subject (lib/db/vault.ts): the customer whose email
 * `subjectEmail` is (the ticket's order's), or a subject of the thread's own. The subject's key is made first (a key
 * service that fails answers 503 and nothing is written); the ticket (title, message, fields) is stored sealed under
 * it, its words as a blind index (lib/db/search-terms.ts), and from the thread's first checkpoint its state is sealed.
 * Mid-rollout beside a release that cannot read sealed tickets, the ticket is stored in clear (see `ticketSealer`).
 */
export async function createThread({
  db,
  title,
  customerMessage,
  orderRef,
  ticket = null,
  createdBy,
  agentId = "refund",
  agentVersion = "1",
  id = randomUUID(),
  alongside = [],
  subjectEmail = null,
  subjectId: filedUnder = null,
}: {
  db: Queryable;
  /** The thread's id (a new UUID when not given: give it to name the thread in `alongside` writes). */
  id?: string;
  /** Other writes made in the same statement (data-modifying CTEs, e.g. the audit row of the ticket). */
  alongside?: Alongside[];
  /** The registered agent whose graph runs the thread. */
  agentId?: string;
  /** The agent version it starts on (the agent's current one). */
  agentVersion?: string;
  title: string;
  customerMessage: string;
  orderRef: string | null;
  /** The ticket's fields as its agent's intake read them (lib/runtime/runs/intake.ts). */
  ticket?: Record<string, unknown> | null;
  /** The principal who filed it (a user id, `key:<id>`, `system:<name>`). */
  createdBy?: string | null;
  /** The email of the customer the thread is about (its order's), when known. */
  subjectEmail?: string | null;
  /** The subject of the customer the thread is about, when known as such (its order's `subject_id`). */
  subjectId?: string | null;
}): Promise<Thread> {
  const subjectId = filedUnder ?? (subjectEmail ? customerSubjectId(subjectEmail) : threadSubjectId(id));
  const key = await ensureSubjectKey(db, subjectId);
  const sealer = await ticketSealer(db, { subjectId, key });
  const words = sealer
    ? [db.insert(threadSearch).values({ threadId: id, terms: ticketTerms(title, customerMessage) })]
    : [];
  const [row] = await withAlongside(db, [...alongside, ...words])
    .insert(threads)
    .values({
      id,
      agentId,
      agentVersion,
      title: sealer ? sealer.text(title) : title,
      customerMessage: sealer ? sealer.text(customerMessage) : customerMessage,
      orderRef,
      ticket: sealer ? sealer.json(ticket) : ticket,
      createdBy: createdBy ?? null,
      subjectId,
    })
    .returning();
  if (!row) throw new Error("createThread: insert returned no row");
  primeThreadKey(id, subjectId, key);
  return { ...row, title, customerMessage, ticket };
}

/** Whether a stored thread's ticket is sealed (its title, message or fields). */
function ticketSealed(row: Pick<Thread, "title" | "customerMessage" | "ticket">): boolean {
  return (
    row.title.startsWith(SEALED_TEXT) ||
    row.customerMessage.startsWith(SEALED_TEXT) ||
    isSealedJson(row.ticket)
  );
}

/**
 * Threads as stored, with their tickets opened (title, message, fields; `[erased]` once their subject's key was
 * destroyed): every query that returns threads returns them so, one key lookup for all of them.
 */
export async function openThreads<T extends Pick<Thread, "id" | "title" | "customerMessage" | "ticket">>(
  db: KeySource,
  rows: readonly T[],
): Promise<T[]> {
  const sealed = rows.filter(ticketSealed);
  if (sealed.length === 0) return [...rows];
  await primeThreadKeys(
    db,
    sealed.map((r) => r.id),
  );
  return Promise.all(
    rows.map(async (row) =>
      ticketSealed(row)
        ? {
            ...row,
            title: await openThreadText(db, row.id, row.title),
            customerMessage: await openThreadText(db, row.id, row.customerMessage),
            ticket: (await openThreadJson(db, row.id, row.ticket)) as Thread["ticket"],
          }
        : row,
    ),
  );
}

async function openThread(db: KeySource, row: Thread | undefined): Promise<Thread | undefined> {
  return row && ticketSealed(row) ? (await openThreads(db, [row]))[0] : row;
}

export async function getThread({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<Thread | undefined> {
  // An id no thread can have (a NUL from a hand-typed URL, say) names nothing; Postgres would refuse it.
  if (!isPlausibleId(threadId)) return undefined;
  const [row] = await db.select().from(threads).where(eq(threads.id, threadId));
  return openThread(db, row);
}

/** Several threads by id in one statement (ids no thread can have are skipped): id → thread. */
export async function getThreads({
  db,
  threadIds,
}: {
  db: Queryable;
  threadIds: readonly string[];
}): Promise<Map<string, Thread>> {
  const ids = [...new Set(threadIds)].filter(isPlausibleId);
  if (ids.length === 0) return new Map();
  const rows = await db
    .select()
    .from(threads)
    .where(sql`${threads.id} = ANY(${sql.param(ids)}::text[])`);
  return new Map((await openThreads(db, rows)).map((row) => [row.id, row]));
}

/** Lock the thread row for the rest of the transaction: serializes run claims on one thread. */
export async function lockThread({
  tx,
  threadId,
}: {
  tx: Queryable;
  threadId: string;
}): Promise<Thread | undefined> {
  if (!isPlausibleId(threadId)) return undefined;
  const [row] = await tx.select().from(threads).where(eq(threads.id, threadId)).for("update");
  return openThread(tx, row);
}

export async function setThreadStatus(change: ThreadStatusChange): Promise<void> {
  await threadStatusUpdate(change);
}

export interface ThreadStatusChange {
  db: Queryable;
  threadId: string;
  status: Thread["status"];
  /** The order the agent found the thread to be about (kept when this says nothing). */
  contextOrder?: string | null;
  /** Who started the thread's first run (four-eyes: they may not approve its refund), set in the same statement. */
  startedBy?: string;
}

/** The update of {@link setThreadStatus}, not yet run: to write it in one statement with other writes. */
export function threadStatusUpdate({ db, threadId, status, contextOrder, startedBy }: ThreadStatusChange) {
  return db
    .update(threads)
    .set({ ...statusChange(status, contextOrder), ...(startedBy ? { startedBy } : {}) })
    .where(eq(threads.id, threadId));
}

/** A status change's columns: the status, its time, and the thread's order when the change names one. */
function statusChange(status: Thread["status"], contextOrder: string | null | undefined) {
  return {
    status,
    updatedAt: sql`now()`,
    ...(contextOrder ? { contextOrder: contextOrderUpdate(contextOrder) } : {}),
  };
}

/**
 * The thread's found order becomes `order` only while the thread is about no customer yet, or `order` is the same
 * customer's (the same subject; for orders in clear, the same email): a thread belongs to the customer it was first
 * found to be about. A branch whose state names another customer's order (an edit, a typo) cannot make money follow
 * it (the ledger pays only the thread's own customer).
 */
export function contextOrderUpdate(order: string) {
  return sql`CASE WHEN threads.context_order IS NULL OR threads.context_order = ${order}
    OR NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = threads.context_order)
    OR EXISTS (SELECT 1 FROM orders o
        JOIN orders n ON n.subject_id = o.subject_id OR lower(n.customer_email) = lower(o.customer_email)
      WHERE o.id = threads.context_order AND n.id = ${order})
    THEN ${order} ELSE threads.context_order END`;
}

/** Newest threads first (the console's simple list). */
export async function listRecentThreads({
  db,
  limit = 50,
}: {
  db: Queryable;
  limit?: number;
}): Promise<Thread[]> {
  return openThreads(db, await db.select().from(threads).orderBy(desc(threads.updatedAt)).limit(limit));
}

/** Record who last edited the thread's state (a fork with edits). */
export async function setThreadEditor({
  db,
  threadId,
  editedBy,
}: {
  db: Queryable;
  threadId: string;
  editedBy: string;
}): Promise<void> {
  await db.update(threads).set({ lastEditedBy: editedBy }).where(eq(threads.id, threadId));
}

/**
 * A thread no one can run as it is (its version is gone, or a run ended with a decision still pending): a supervisor
 * must migrate it, fork it onto the current version or close it. The inbox's pending items of it stay visible.
 */
export async function markNeedsAttention({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<void> {
  await db
    .update(threads)
    .set({ status: "needs_attention", updatedAt: sql`now()` })
    .where(eq(threads.id, threadId));
}

/** Move a thread to another version of its agent (a migration, or a fork onto the current version). */
export async function setThreadVersion({
  db,
  threadId,
  agentVersion,
}: {
  db: Queryable;
  threadId: string;
  agentVersion: string;
}): Promise<void> {
  await db.update(threads).set({ agentVersion, updatedAt: sql`now()` }).where(eq(threads.id, threadId));
}

/**
 * Put back the version and the last editor a branch set on a thread when the branch could not be made (its first
 * checkpoint was never written): the thread reads as it did before the attempt.
 */
export async function restoreThreadAfterBranch({
  db,
  threadId,
  agentVersion,
  lastEditedBy,
}: {
  db: Queryable;
  threadId: string;
  agentVersion: string;
  lastEditedBy: string | null;
}): Promise<void> {
  await db.update(threads).set({ agentVersion, lastEditedBy }).where(eq(threads.id, threadId));
}

/** How many threads not completed are pinned to each of these `agent@version` keys (0 for a key with none). */
export async function countOpenThreadsOn({
  db,
  versions,
}: {
  db: Queryable;
  versions: { agent: string; version: string }[];
}): Promise<number> {
  if (versions.length === 0) return 0;
  const keys = versions.map((v) => `${v.agent}@${v.version}`);
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(threads)
    .where(
      sql`${threads.agentId} || '@' || ${threads.agentVersion} = ANY(${sql.param(keys)}::text[]) AND ${threads.status} <> 'completed'`,
    );
  return row?.n ?? 0;
}

/** Threads per agent version and status (to retire a version once no open thread uses it). */
export async function countThreadsByVersion({
  db,
}: {
  db: Queryable;
}): Promise<{ agentId: string; agentVersion: string; status: string; threads: number }[]> {
  return db
    .select({
      agentId: threads.agentId,
      agentVersion: threads.agentVersion,
      status: threads.status,
      threads: sql<number>`count(*)::int`,
    })
    .from(threads)
    .groupBy(threads.agentId, threads.agentVersion, threads.status)
    .orderBy(threads.agentId, threads.agentVersion, threads.status);
}

/**
 * Paused threads of `agentId` under one of `versions` (those a newer version declares a migration from), with the
 * checkpoint their open decisions wait at: the candidates a migration moves.
 */
export async function listThreadsToMigrate({
  db,
  agentId,
  versions,
  after,
  limit,
}: {
  db: Queryable;
  agentId: string;
  versions: string[];
  /** Keyset paging: thread ids after this one. */
  after?: string;
  limit: number;
}): Promise<{ threadId: string; agentVersion: string; checkpointId: string }[]> {
  if (versions.length === 0) return [];
  return db
    .selectDistinctOn([threads.id], {
      threadId: threads.id,
      agentVersion: threads.agentVersion,
      checkpointId: decisions.checkpointId,
    })
    .from(threads)
    .innerJoin(decisions, and(eq(decisions.threadId, threads.id), eq(decisions.status, "pending")))
    .where(
      and(
        eq(threads.agentId, agentId),
        inArray(threads.agentVersion, versions),
        inArray(threads.status, ["interrupted", "needs_attention"]),
        after === undefined ? undefined : gt(threads.id, after),
      ),
    )
    .orderBy(threads.id)
    .limit(limit);
}
