import "server-only";
import {
  type AnyColumn,
  and,
  asc,
  desc,
  eq,
  gte,
  inArray,
  lte,
  notInArray,
  type SQL,
  sql,
} from "drizzle-orm";
import { AppError } from "@/lib/contract/errors";
import {
  INBOX_DEFAULT_LIMIT,
  INBOX_MAX_LIMIT,
  type InboxClaim,
  type InboxDecision,
  type InboxDecisionItem,
  type InboxFilter,
  type InboxPage,
  type InboxThreadItem,
  type QueueNeighbour,
} from "@/lib/contract/inbox";
import type { InboxStatus, InboxThreadStatus } from "@/lib/contract/wire";
import { decisionClaims, decisions, threads } from "../schema";
import type { Queryable } from "../tx";
import { openTextColumn } from "../vault";
import { openedDecisions } from "./decisions";
import { decodeInboxCursor, encodeInboxCursor } from "./inbox-cursor";

export { decodeInboxCursor, encodeInboxCursor } from "./inbox-cursor";

/*
 * The operator's inbox, answered from the app tables and their indexes only (never from checkpoints).
 *
 * Pending decisions (status "pending"), soonest due first, walk the partial index `decisions_pending_due_idx`
 * (due_at, interrupt_id), or `decisions_pending_action_idx` (action, due_at, interrupt_id) with an action filter, or
 * `decisions_escalated_due_idx` for the escalated view, in index order from the cursor's key, and join each row to its
 * thread by primary key and to its live claim (`decision_claims`, by primary key). The figures below are from before
 * deadlines (sorted by created_at then); `npm run bench:inbox` prints today's plans. EXPLAIN ANALYZE on 100k threads, 140k decisions of
 * which 6.7k pending (`npm run bench:inbox`, PostgreSQL 15):
 *   Limit → Nested Loop → Index Scan using decisions_pending_idx on decisions
 *                         (Index Cond: ROW(created_at, interrupt_id) > ROW($ts, $id))
 *                       → Index Scan using threads_pkey on threads (Index Cond: id = decisions.thread_id)
 *   with `action`: Index Scan using decisions_pending_action_idx (Index Cond: action = $a [AND ROW(…) > ROW(…)],
 *   Filter: amount_cents >= $min). No sort node: rows come in index order and the scan stops at limit + 1.
 * Amount filters are applied to the rows the index scan yields (amounts are not indexed): cheap while the pending
 * set is thousands of rows, and they never change the order.
 *
 * Threads by status walk `threads_status_updated_idx` (status, updated_at, id) — or `threads_updated_idx` for "all" —
 * backwards; their pending decisions come in a second statement on `decisions_thread_status_idx` (two statements
 * per page whatever its size, never one per thread).
 *
 * Keys keep Postgres's microsecond timestamps (a JS Date would round them to milliseconds, and a rounded key would
 * repeat or skip rows on the next page); the cursor is base64url JSON of the last row's key.
 */

// ── queries ────────────────────────────────────────────────────────────────────────────────────────────────────────

const isoMicros = (column: AnyColumn) =>
  sql<string>`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

// A literal (not a parameter), so the planner can match the partial indexes' predicate whatever the plan cache does.
const isPending = sql`${decisions.status} = 'pending'`;

const decisionColumns = {
  interruptId: decisions.interruptId,
  action: decisions.action,
  title: decisions.title,
  orderId: decisions.orderId,
  customerName: decisions.customerName,
  amountCents: decisions.amountCents,
  currency: decisions.currency,
  findings: decisions.findings,
  createdAt: isoMicros(decisions.createdAt),
  ageSeconds: sql<number>`floor(extract(epoch from now() - ${decisions.createdAt}))::int`,
  dueAt: isoMicros(decisions.dueAt),
  secondsLeft: sql<number>`floor(extract(epoch from ${decisions.dueAt} - now()))::int`,
  escalatedAt: sql<
    string | null
  >`to_char(${decisions.escalatedAt} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
  claim: sql<InboxClaim | null>`CASE WHEN ${decisionClaims.userId} IS NULL THEN NULL ELSE json_build_object(
    'userId', ${decisionClaims.userId}, 'userLabel', ${decisionClaims.userLabel},
    'claimedAt', to_char(${decisionClaims.claimedAt} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) END`,
};

/** The live claim of a decision row (an expired claim is nobody's). */
const liveClaim = and(
  eq(decisionClaims.interruptId, decisions.interruptId),
  sql`${decisionClaims.expiresAt} > now()`,
);

const threadColumns = {
  threadId: threads.id,
  title: threads.title,
  orderRef: threads.orderRef,
  status: threads.status,
  updatedAt: isoMicros(threads.updatedAt),
};

/**
 * Inbox rows with their decisions' title and customer name and their thread's title opened (sealed under their
 * threads' keys, lib/db/queries/decisions.ts and threads.ts): the page's keys are looked up in one statement.
 */
async function openedRows<
  R extends {
    decision: { title: string | null; customerName: string | null };
    thread: { threadId: string; title?: string };
  },
>(db: Queryable, rows: R[]): Promise<R[]> {
  const opened = await openedDecisions(
    db,
    rows.map((r) => ({
      threadId: r.thread.threadId,
      title: r.decision.title,
      customerName: r.decision.customerName,
    })),
  );
  const threadsOpened = await openThreadTitles(
    db,
    rows.map((r) => r.thread),
  );
  return rows.map((r, i) => ({
    ...r,
    thread: threadsOpened[i] ?? r.thread,
    decision: {
      ...r.decision,
      title: opened[i]?.title ?? null,
      customerName: opened[i]?.customerName ?? null,
    },
  }));
}

/** Threads' rows (a page, a neighbour) with their titles opened. */
function openThreadTitles<T extends { threadId: string; title?: string }>(
  db: Queryable,
  rows: T[],
): Promise<T[]> {
  return openTextColumn(db, rows as (T & { title: string })[], "title");
}

function clampLimit(limit: number | undefined): number {
  return Math.min(Math.max(Math.trunc(limit ?? INBOX_DEFAULT_LIMIT), 1), INBOX_MAX_LIMIT);
}

/**
 * The conditions of the pending queue as `filter` and the reader's teams narrow it (decisions joined to their
 * threads, left-joined to their live claim): the inbox lists by them and the thread page's next / previous walk
 * them, so the two never disagree.
 */
function pendingWhere(filter: InboxFilter, hiddenAgents: readonly string[]): (SQL | undefined)[] {
  const where: (SQL | undefined)[] = [isPending];
  if (hiddenAgents.length > 0) where.push(notInArray(threads.agentId, [...hiddenAgents]));
  // NOT EXISTS rather than "the left join found nothing": the planner estimates an anti-join well and walks the
  // due-date index, where a filter on the joined row is guessed at one row and sorts the whole pending set.
  if (filter.claimedBy === null) {
    where.push(
      sql`NOT EXISTS (SELECT 1 FROM ${decisionClaims} c WHERE c.interrupt_id = ${decisions.interruptId} AND c.expires_at > now())`,
    );
  } else if (filter.claimedBy !== undefined) where.push(eq(decisionClaims.userId, filter.claimedBy));
  if (filter.escalated) where.push(sql`${decisions.escalatedAt} IS NOT NULL`);
  if (filter.action !== undefined) where.push(eq(decisions.action, filter.action));
  if (filter.agentVersion !== undefined) {
    where.push(
      eq(threads.agentId, filter.agentVersion.agentId),
      eq(threads.agentVersion, filter.agentVersion.version),
    );
  }
  if (filter.minAmountCents !== undefined) where.push(gte(decisions.amountCents, filter.minAmountCents));
  if (filter.maxAmountCents !== undefined) where.push(lte(decisions.amountCents, filter.maxAmountCents));
  if (filter.olderThanSeconds !== undefined) {
    where.push(sql`${decisions.createdAt} <= now() - make_interval(secs => ${filter.olderThanSeconds})`);
  }
  return where;
}

/**
 * The pending-decisions page as a Drizzle query (not yet run): `listPendingInbox` runs it, the benchmark EXPLAINs it.
 * Fetches one row more than `limit` to tell whether another page follows.
 */
export function buildPendingInboxQuery({
  db,
  filter = {},
  after,
  limit,
  hiddenAgents = [],
}: {
  db: Queryable;
  filter?: InboxFilter;
  /** Agents whose threads the reader may not see (teams). */
  hiddenAgents?: readonly string[];
  after?: { dueAt: string; interruptId: string };
  limit: number;
}) {
  const where = pendingWhere(filter, hiddenAgents);
  if (after) {
    where.push(
      sql`(${decisions.dueAt}, ${decisions.interruptId}) > (${after.dueAt}::timestamptz, ${after.interruptId})`,
    );
  }
  return db
    .select({ decision: decisionColumns, thread: threadColumns })
    .from(decisions)
    .innerJoin(threads, eq(threads.id, decisions.threadId))
    .leftJoin(decisionClaims, liveClaim)
    .where(and(...where))
    .orderBy(asc(decisions.dueAt), asc(decisions.interruptId))
    .limit(limit + 1);
}

/** Pending decisions, soonest due first, keyset-paged on (due_at, interrupt_id). */
export async function listPendingInbox({
  db,
  filter,
  cursor,
  limit,
  hiddenAgents,
}: {
  db: Queryable;
  filter?: InboxFilter;
  hiddenAgents?: readonly string[];
  cursor?: string | null;
  limit?: number;
}): Promise<InboxPage<InboxDecisionItem>> {
  const size = clampLimit(limit);
  const key = cursor ? decodeInboxCursor(cursor, "pending") : undefined;
  const [rows, [counted]] = await Promise.all([
    buildPendingInboxQuery({
      db,
      filter,
      after: key && { dueAt: key.t, interruptId: key.i },
      limit: size,
      hiddenAgents,
    }),
    // The whole queue these filters match, not the page: what the heading says.
    db
      .select({ n: sql<number>`count(*)::int` })
      .from(decisions)
      .innerJoin(threads, eq(threads.id, decisions.threadId))
      .leftJoin(decisionClaims, liveClaim)
      .where(and(...pendingWhere(filter ?? {}, hiddenAgents ?? []))),
  ]);
  const page = await openedRows(db, rows.slice(0, size));
  const last = page[page.length - 1];
  return {
    items: page.map((row) => ({ kind: "decision", decision: row.decision, thread: row.thread })),
    total: Number(counted?.n ?? 0),
    nextCursor:
      rows.length > size && last
        ? encodeInboxCursor({ m: "pending", t: last.decision.dueAt, i: last.decision.interruptId })
        : null,
  };
}

/** The threads page as a Drizzle query (not yet run), one row more than `limit`; see `buildPendingInboxQuery`. */
export function buildThreadInboxQuery({
  db,
  status,
  before,
  limit,
  hiddenAgents = [],
}: {
  db: Queryable;
  hiddenAgents?: readonly string[];
  status: InboxThreadStatus;
  before?: { updatedAt: string; threadId: string };
  limit: number;
}) {
  const where: (SQL | undefined)[] = [];
  if (status !== "all") where.push(eq(threads.status, status));
  if (hiddenAgents.length > 0) where.push(notInArray(threads.agentId, [...hiddenAgents]));
  if (before) {
    where.push(
      sql`(${threads.updatedAt}, ${threads.id}) < (${before.updatedAt}::timestamptz, ${before.threadId})`,
    );
  }
  return db
    .select(threadColumns)
    .from(threads)
    .where(and(...where))
    .orderBy(desc(threads.updatedAt), desc(threads.id))
    .limit(limit + 1);
}

/** Threads of one status (or all), newest-updated first, keyset-paged on (updated_at, id), with pending decisions. */
export async function listThreadInbox({
  db,
  status,
  cursor,
  limit,
  hiddenAgents,
}: {
  db: Queryable;
  hiddenAgents?: readonly string[];
  status: InboxThreadStatus;
  cursor?: string | null;
  limit?: number;
}): Promise<InboxPage<InboxThreadItem>> {
  const size = clampLimit(limit);
  const key = cursor ? decodeInboxCursor(cursor, status) : undefined;
  const rows = await buildThreadInboxQuery({
    db,
    status,
    before: key && { updatedAt: key.t, threadId: key.i },
    limit: size,
    hiddenAgents,
  });
  const page = await openThreadTitles(db, rows.slice(0, size));
  const pending = page.length
    ? await db
        .select({ threadId: decisions.threadId, decision: decisionColumns })
        .from(decisions)
        .leftJoin(decisionClaims, liveClaim)
        .where(
          and(
            inArray(
              decisions.threadId,
              page.map((t) => t.threadId),
            ),
            isPending,
          ),
        )
        .orderBy(asc(decisions.dueAt), asc(decisions.interruptId))
    : [];
  const byThread = new Map<string, InboxDecision[]>();
  for (const row of await openedRows(
    db,
    pending.map((p) => ({ ...p, thread: { threadId: p.threadId } })),
  )) {
    const list = byThread.get(row.threadId) ?? [];
    list.push(row.decision);
    byThread.set(row.threadId, list);
  }
  const last = page[page.length - 1];
  return {
    items: page.map((thread) => ({
      kind: "thread",
      thread,
      pendingDecisions: byThread.get(thread.threadId) ?? [],
    })),
    nextCursor:
      rows.length > size && last
        ? encodeInboxCursor({ m: status, t: last.updatedAt, i: last.threadId })
        : null,
  };
}

/**
 * The inbox: pending decisions (status "pending", the default) or threads by status. Decision filters apply to
 * status "pending" only. A cursor is valid only for the listing (status) that produced it.
 */
export async function listInbox({
  db,
  status = "pending",
  filter,
  cursor,
  limit,
  hiddenAgents,
}: {
  db: Queryable;
  /** Agents whose threads the reader may not see (teams): left out of every listing. */
  hiddenAgents?: readonly string[];
  status?: InboxStatus;
  filter?: InboxFilter;
  cursor?: string | null;
  limit?: number;
}): Promise<InboxPage<InboxDecisionItem> | InboxPage<InboxThreadItem>> {
  if (status === "pending") return listPendingInbox({ db, filter, cursor, limit, hiddenAgents });
  if (filter && Object.values(filter).some((v) => v !== undefined)) {
    throw new AppError(
      "bad_request:inbox",
      "action, minAmount, maxAmount and olderThan filter pending decisions: use them with status=pending.",
    );
  }
  return listThreadInbox({ db, status, cursor, limit, hiddenAgents });
}

/**
 * The threads before and after this one in the queue of pending decisions (soonest due first, as the inbox lists
 * them), by this thread's soonest pending decision; for a thread with nothing pending, "next" is the queue's head.
 * With `filter` (the inbox view the operator came from) the queue is that view's: its decisions only, this thread's
 * place by its soonest decision in the view. Another decision of this same thread is never its own neighbour. Index
 * walks of `decisions_pending_due_idx`.
 */
export async function queueNeighbours({
  db,
  threadId,
  filter = {},
  hiddenAgents = [],
}: {
  db: Queryable;
  threadId: string;
  /** The inbox view's filters (none: the whole queue). */
  filter?: InboxFilter;
  /** Agents whose threads the reader may not see (teams): never a neighbour. */
  hiddenAgents?: readonly string[];
}): Promise<{ previous: QueueNeighbour | null; next: QueueNeighbour | null }> {
  const inView = pendingWhere(filter, hiddenAgents);
  const [own] = await db
    .select({ dueAt: isoMicros(decisions.dueAt), interruptId: decisions.interruptId })
    .from(decisions)
    .innerJoin(threads, eq(threads.id, decisions.threadId))
    .leftJoin(decisionClaims, liveClaim)
    .where(and(...inView, eq(decisions.threadId, threadId)))
    .orderBy(asc(decisions.dueAt), asc(decisions.interruptId))
    .limit(1);
  const neighbour = async (direction: "next" | "previous"): Promise<QueueNeighbour | null> => {
    if (!own && direction === "previous") return null;
    const key = own
      ? direction === "next"
        ? sql`(${decisions.dueAt}, ${decisions.interruptId}) > (${own.dueAt}::timestamptz, ${own.interruptId})`
        : sql`(${decisions.dueAt}, ${decisions.interruptId}) < (${own.dueAt}::timestamptz, ${own.interruptId})`
      : undefined;
    const order =
      direction === "next"
        ? [asc(decisions.dueAt), asc(decisions.interruptId)]
        : [desc(decisions.dueAt), desc(decisions.interruptId)];
    const [row] = await db
      .select({ threadId: threads.id, title: threads.title })
      .from(decisions)
      .innerJoin(threads, eq(threads.id, decisions.threadId))
      .leftJoin(decisionClaims, liveClaim)
      .where(and(...inView, sql`${decisions.threadId} <> ${threadId}`, key))
      .orderBy(...order)
      .limit(1);
    return row ? ((await openThreadTitles(db, [row]))[0] ?? null) : null;
  };
  const [previous, next] = await Promise.all([neighbour("previous"), neighbour("next")]);
  return { previous, next };
}
