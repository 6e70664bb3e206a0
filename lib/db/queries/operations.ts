import "server-only";
import { type AnyColumn, and, desc, eq, gte, inArray, isNotNull, lt, type SQL, sql } from "drizzle-orm";
import { decisions, effects, queueSamples, runs, threads } from "../schema";
import type { Queryable } from "../tx";
import { TIMER_ACTION } from "./deadlines";
import { isOpenTaskStatus, OPEN_TASK_STATUSES, UNDELIVERED_STATUSES } from "./effects";

/**
 * What operations watch, read from the shared tables: the numbers `/api/metrics` reports as gauges and the
 * operations page shows, from the same functions, so the two never disagree.
 */
export interface QueueState {
  /** Decisions waiting for a person, by interrupt action (durable timers are not: see `timersWaiting`). */
  pendingByAction: Record<string, number>;
  pending: number;
  /** Age of the oldest decision waiting for a person in seconds; 0 when none waits. */
  oldestAgeSeconds: number;
  /**
   * Durable timers waiting for their time (`wait_timer` questions): nobody has to answer them, so they are neither
   * pending work nor its age — an hour's cooling-off is not a decision an hour overdue.
   */
  timersWaiting: number;
  threadsByStatus: Record<string, number>;
  /** Undelivered side effects (queued, sending, failed, unconfirmed), by kind and status. */
  openEffects: { kind: string; status: string; count: number }[];
  /** Threads whose last run failed or that wait for a supervisor. */
  failedThreads: number;
  /** Side effects that ran out of attempts, or whose outcome is unknown, and wait for an operator. */
  failedEffects: number;
}

/** The outcome of a decision as a word: the answer's `decision` or `choice`, `cancelled`, or `answered`. */
export const DECISION_OUTCOME = sql<string>`coalesce(${decisions.outcome},
  case when ${decisions.resumeStatus} = 'cancelled' then 'cancelled' end,
  ${decisions.answer}->>'decision', ${decisions.answer}->>'choice', 'answered')`;

export async function readQueueState({ db }: { db: Queryable }): Promise<QueueState> {
  const [pendingRows, threadRows, effectRows] = await Promise.all([
    db
      .select({
        action: decisions.action,
        count: sql<number>`count(*)::int`,
        oldest: sql<number | null>`extract(epoch from now() - min(${decisions.createdAt}))::float8`,
      })
      .from(decisions)
      .where(eq(decisions.status, "pending"))
      .groupBy(decisions.action),
    db
      .select({ status: threads.status, count: sql<number>`count(*)::int` })
      .from(threads)
      .groupBy(threads.status),
    db
      .select({ kind: effects.kind, status: effects.status, count: sql<number>`count(*)::int` })
      .from(effects)
      .where(inArray(effects.status, [...UNDELIVERED_STATUSES]))
      .groupBy(effects.kind, effects.status),
  ]);
  const timers = pendingRows.filter((r) => r.action === TIMER_ACTION);
  const people = pendingRows.filter((r) => r.action !== TIMER_ACTION);
  const pendingByAction = Object.fromEntries(people.map((r) => [r.action, Number(r.count)]));
  const threadsByStatus = Object.fromEntries(threadRows.map((r) => [r.status, Number(r.count)]));
  const openEffects = effectRows.map((r) => ({ kind: r.kind, status: r.status, count: Number(r.count) }));
  return {
    pendingByAction,
    pending: people.reduce((n, r) => n + Number(r.count), 0),
    oldestAgeSeconds: Math.max(0, Math.floor(Math.max(0, ...people.map((r) => Number(r.oldest ?? 0))))),
    timersWaiting: timers.reduce((n, r) => n + Number(r.count), 0),
    threadsByStatus,
    openEffects,
    failedThreads: (threadsByStatus.failed ?? 0) + (threadsByStatus.needs_attention ?? 0),
    failedEffects: openEffects.filter((e) => isOpenTaskStatus(e.status)).reduce((n, e) => n + e.count, 0),
  };
}

/**
 * Record the queue for the sampling interval that contains now (once per interval, whichever instance is first) and
 * forget samples older than `keepHours`.
 */
export async function recordQueueSample({
  db,
  state,
  intervalMs,
  keepHours,
}: {
  db: Queryable;
  state: QueueState;
  intervalMs: number;
  keepHours: number;
}): Promise<void> {
  const seconds = intervalMs / 1000;
  await db
    .insert(queueSamples)
    .values({
      at: sql`to_timestamp(floor(extract(epoch from now()) / ${seconds}) * ${seconds})`,
      pending: state.pending,
      oldestAgeSeconds: state.oldestAgeSeconds,
      pendingByAction: state.pendingByAction,
      failedThreads: state.failedThreads,
      failedEffects: state.failedEffects,
    })
    .onConflictDoNothing({ target: queueSamples.at });
  await db.delete(queueSamples).where(lt(queueSamples.at, sql`now() - make_interval(hours => ${keepHours})`));
}

/** Samples of the last `hours`, oldest first. */
export async function listQueueSamples({ db, hours }: { db: Queryable; hours: number }) {
  return db
    .select()
    .from(queueSamples)
    .where(gte(queueSamples.at, sql`now() - make_interval(hours => ${hours})`))
    .orderBy(queueSamples.at);
}

/** Decisions taken per hour over the last `hours`, by outcome (from the ledger: every instance's decisions). */
export async function countDecisionsPerHour({
  db,
  hours,
}: {
  db: Queryable;
  hours: number;
}): Promise<{ hour: Date; outcome: string; count: number }[]> {
  const hour = sql<Date>`date_trunc('hour', ${decisions.resolvedAt})`;
  const rows = await db
    .select({ hour, outcome: DECISION_OUTCOME, count: sql<number>`count(*)::int` })
    .from(decisions)
    .where(
      and(
        isNotNull(decisions.resolvedAt),
        gte(decisions.resolvedAt, sql`date_trunc('hour', now()) - make_interval(hours => ${hours - 1})`),
      ),
    )
    .groupBy(hour, DECISION_OUTCOME)
    .orderBy(hour);
  return rows.map((r) => ({ hour: new Date(r.hour), outcome: r.outcome, count: Number(r.count) }));
}

/** Rows of threads the reader may see: none of a hidden agent's (teams). */
function notHidden(threadId: AnyColumn, hiddenAgents: readonly string[]): SQL | undefined {
  if (hiddenAgents.length === 0) return undefined;
  return sql`NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = ${threadId} AND t.agent_id IN (${sql.join(
    hiddenAgents.map((a) => sql`${a}`),
    sql`, `,
  )}))`;
}

/** The most recent failed runs (newest first). */
export async function listFailedRuns({
  db,
  limit,
  hiddenAgents = [],
}: {
  db: Queryable;
  limit: number;
  /** Agents whose threads the reader may not see (teams). */
  hiddenAgents?: readonly string[];
}) {
  return db
    .select({
      runId: runs.id,
      threadId: runs.threadId,
      kind: runs.kind,
      errorCode: runs.errorCode,
      finishedAt: runs.finishedAt,
      traceId: runs.traceId,
    })
    .from(runs)
    .where(and(eq(runs.status, "failed"), notHidden(runs.threadId, hiddenAgents)))
    .orderBy(desc(runs.finishedAt))
    .limit(limit);
}

/** Side effects that ran out of attempts, or whose outcome is unknown, and wait for an operator (newest first). */
export async function listFailedEffects({
  db,
  limit,
  hiddenAgents = [],
}: {
  db: Queryable;
  limit: number;
  hiddenAgents?: readonly string[];
}) {
  return db
    .select({
      effectId: effects.id,
      threadId: effects.threadId,
      kind: effects.kind,
      attempts: effects.attempts,
      updatedAt: effects.updatedAt,
    })
    .from(effects)
    .where(and(inArray(effects.status, [...OPEN_TASK_STATUSES]), notHidden(effects.threadId, hiddenAgents)))
    .orderBy(desc(effects.updatedAt))
    .limit(limit);
}
