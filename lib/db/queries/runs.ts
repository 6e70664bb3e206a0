import "server-only";
import { and, desc, eq, getTableColumns, inArray, type SQL, sql } from "drizzle-orm";
import { ACTIVE_RUN_STATUSES, type RunStatus } from "@/lib/contract/wire";
import { type Run, runs, threads } from "../schema";
import { type Alongside, type Queryable, withAlongside } from "../tx";
import { openThreadJson, openThreadText, sealThreadJson } from "../vault";

/*
 * A run's input holds the customer's and the staff's words (a message, the answers to a decision): it is stored sealed
 * under its thread's subject key (lib/db/vault.ts). Every function here that writes it seals it, and every one that
 * returns a run returns it opened.
 */

/** `run` with its input opened (see above). */
async function opened<T extends Pick<Run, "threadId" | "input">>(db: Queryable, run: T): Promise<T>;
async function opened<T extends Pick<Run, "threadId" | "input">>(
  db: Queryable,
  run: T | undefined,
): Promise<T | undefined>;
async function opened<T extends Pick<Run, "threadId" | "input">>(
  db: Queryable,
  run: T | undefined,
): Promise<T | undefined> {
  if (!run) return run;
  const { errorMessage } = run as { errorMessage?: string | null };
  return {
    ...run,
    input: await openThreadJson(db, run.threadId, run.input),
    ...(errorMessage ? { errorMessage: await openThreadText(db, run.threadId, errorMessage) } : {}),
  };
}

export async function getRun({ db, runId }: { db: Queryable; runId: string }): Promise<Run | undefined> {
  const [row] = await db.select().from(runs).where(eq(runs.id, runId));
  return opened(db, row);
}

/** A thread's latest run that ended failed or was stopped, with its error (code and message), or undefined. */
export async function getLastFailedRun({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<Pick<Run, "id" | "errorCode" | "errorMessage"> | undefined> {
  const [row] = await db
    .select({ id: runs.id, errorCode: runs.errorCode, errorMessage: runs.errorMessage })
    .from(runs)
    .where(and(eq(runs.threadId, threadId), inArray(runs.status, ["failed", "cancelled", "timed_out"])))
    .orderBy(desc(runs.createdAt))
    .limit(1);
  return row?.errorMessage
    ? { ...row, errorMessage: await openThreadText(db, threadId, row.errorMessage) }
    : row;
}

export async function getActiveRun({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<Run | undefined> {
  const [row] = await db
    .select()
    .from(runs)
    .where(and(eq(runs.threadId, threadId), inArray(runs.status, [...ACTIVE_RUN_STATUSES])));
  return opened(db, row);
}

/** Insert a run that is already claimed by `owner`. The partial unique index refuses a second active run. */
export async function insertRun({
  db,
  run,
  alongside = [],
  startRead,
}: {
  db: Queryable;
  /**
   * Other writes made in the same statement (data-modifying CTEs: the thread's status, the run's audit rows), so a
   * run's start is one round trip. They run on the statement's snapshot: none may touch a row another one writes.
   */
  alongside?: Alongside[];
  /** An expression the same statement returns as `startRead` (what the run's start reads of its thread). */
  startRead?: SQL;
  run: Pick<
    Run,
    | "id"
    | "threadId"
    | "kind"
    | "input"
    | "fromCheckpointId"
    | "owner"
    | "startedBy"
    | "startedByLabel"
    | "agentKey"
  > &
    Partial<Pick<Run, "traceId" | "traceSpanId">> & {
      leaseMs: number;
      editedState?: boolean;
      /** Leave it `queued` for an instance that has its agent version (a rolling upgrade): nobody owns it yet. */
      queued?: boolean;
    };
}): Promise<Run & { startRead?: unknown }> {
  const { leaseMs, queued = false, ...given } = run;
  const values = { ...given, input: await sealThreadJson(db, given.threadId, given.input) };
  const [row] = await withAlongside(db, alongside)
    .insert(runs)
    .values(
      queued
        ? { ...values, owner: null, status: "queued", attempts: 0, leaseExpiresAt: sql`now()` }
        : {
            ...values,
            status: "running",
            attempts: 1,
            startedAt: sql`now()`,
            leaseExpiresAt: sql`now() + make_interval(secs => ${leaseMs / 1000})`,
          },
    )
    .returning({ ...getTableColumns(runs), ...(startRead ? { startRead: sql<unknown>`${startRead}` } : {}) });
  if (!row) throw new Error("insertRun: insert returned no row");
  return { ...row, input: given.input };
}

/** Close a run with its final status. Only the current owner may close it (a stale owner's write is ignored). */
export async function finishRun({
  db,
  runId,
  owner,
  status,
  errorCode,
  tokens,
}: {
  db: Queryable;
  runId: string;
  owner: string;
  status: Exclude<RunStatus, (typeof ACTIVE_RUN_STATUSES)[number]>;
  errorCode?: string;
  /** Model tokens this execution spent (added: a recovered run's earlier attempts keep theirs). */
  tokens?: { in: number; out: number };
}): Promise<boolean> {
  const updated = await db
    .update(runs)
    .set({
      status,
      errorCode,
      finishedAt: sql`now()`,
      leaseExpiresAt: null,
      ...(tokens
        ? {
            tokensIn: sql`${runs.tokensIn} + ${tokens.in}`,
            tokensOut: sql`${runs.tokensOut} + ${tokens.out}`,
          }
        : {}),
    })
    .where(and(eq(runs.id, runId), eq(runs.owner, owner), inArray(runs.status, [...ACTIVE_RUN_STATUSES])))
    .returning({ id: runs.id });
  return updated.length === 1;
}

/**
 * Extend the leases of every active run this process owns, in one statement. Returns the ids still owned: a run
 * missing from the answer was taken over by another instance and must stop here.
 */
export async function extendLeases({
  db,
  owner,
  leaseMs,
}: {
  db: Queryable;
  owner: string;
  leaseMs: number;
}): Promise<{ id: string; cancelRequestedBy: string | null }[]> {
  return db
    .update(runs)
    .set({ leaseExpiresAt: sql`now() + make_interval(secs => ${leaseMs / 1000})` })
    .where(and(eq(runs.owner, owner), inArray(runs.status, [...ACTIVE_RUN_STATUSES])))
    .returning({ id: runs.id, cancelRequestedBy: runs.cancelRequestedBy });
}

/** What asking to stop a run came to. */
export type CancelRequest =
  | { state: "requested"; owner: string | null; leaseLive: boolean }
  | { state: "finished"; status: RunStatus }
  | { state: "not_found" };

/**
 * Ask to stop an active run of this thread: mark it (who, when) and announce it on {@link RUNS_CHANNEL} (`cancel|<run
 * id>`, delivered at commit) so the instance executing it aborts the graph at once; its heartbeat sees the mark too.
 * Asking again changes nothing (the first asker is kept). A run that already ended is reported with its status.
 */
export async function requestRunCancel({
  db,
  threadId,
  runId,
  by,
}: {
  db: Queryable;
  threadId: string;
  runId: string;
  by: string;
}): Promise<CancelRequest> {
  const result = await db.execute(sql`WITH marked AS (
    UPDATE runs SET cancel_requested_by = coalesce(cancel_requested_by, ${by}),
      cancel_requested_at = coalesce(cancel_requested_at, now())
    WHERE id = ${runId} AND thread_id = ${threadId} AND status IN ('queued', 'running')
    RETURNING owner, lease_expires_at > now() AS lease_live
  ), announced AS (
    SELECT pg_notify(${RUNS_CHANNEL}, ${`cancel|${runId}`}) WHERE EXISTS (SELECT 1 FROM marked)
  )
  SELECT owner, lease_live, (SELECT count(*) FROM announced)::int AS announced FROM marked`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    owner: string | null;
    lease_live: boolean | null;
  }[];
  const marked = rows[0];
  if (marked) return { state: "requested", owner: marked.owner, leaseLive: marked.lease_live === true };
  const [run] = await db
    .select({ status: runs.status })
    .from(runs)
    .where(and(eq(runs.id, runId), eq(runs.threadId, threadId)));
  return run ? { state: "finished", status: run.status } : { state: "not_found" };
}

/**
 * Take over one active run whose lease expired (its owner died or hung), by compare-and-set: the row is locked
 * with SKIP LOCKED, so two sweepers never claim the same run, and the owner changes, so a stale owner that wakes up
 * can no longer write (event appends and the run's ending check the owner). `everyActive` (embedded single-process
 * database) claims active runs whatever their lease: no other process can be running them.
 */
export async function claimExpiredRun({
  db,
  owner,
  leaseMs,
  everyActive = false,
  executingHere = [],
  agentKeys,
}: {
  db: Queryable;
  owner: string;
  leaseMs: number;
  everyActive?: boolean;
  /**
   * Runs this process is executing. Any other run it owns whose lease expired was lost here (its execution ended
   * without closing it), so it is taken over like anyone else's.
   */
  executingHere?: string[];
  /** Only runs of these `agent@version` keys: an instance claims only runs whose version it has. */
  agentKeys?: string[];
}): Promise<(Run & { lastSeq: number }) | undefined> {
  const notMine =
    executingHere.length > 0
      ? sql`(owner <> ${owner} OR id NOT IN (${sql.join(
          executingHere.map((id) => sql`${id}`),
          sql`, `,
        )}))`
      : sql`true`;
  const result = await db.execute(sql`UPDATE runs SET owner = ${owner}, status = 'running',
      lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}), attempts = attempts + 1
    WHERE id = (
      SELECT id FROM runs
      WHERE status IN ('queued', 'running') AND (${everyActive} OR lease_expires_at < now()) AND ${notMine}
        AND ${agentKeys ? sql`agent_key = ANY(${sql.param(agentKeys)}::text[])` : sql`true`}
      ORDER BY lease_expires_at NULLS FIRST LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING id`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { id: string }[];
  const id = rows[0]?.id;
  if (!id) return undefined;
  const [row] = await db
    .select({ run: runs, lastSeq: threads.lastSeq })
    .from(runs)
    .innerJoin(threads, eq(threads.id, runs.threadId))
    .where(eq(runs.id, id));
  return row ? { ...(await opened(db, row.run)), lastSeq: Number(row.lastSeq) } : undefined;
}

/**
 * Take back the attempt a claim counted for a run that turned out to be executing here (see the sweeper): only while
 * `owner` still holds it and the count is still the one the claim returned. Returns whether it was taken back.
 */
export async function uncountClaim({
  db,
  runId,
  owner,
  attempts,
}: {
  db: Queryable;
  runId: string;
  owner: string;
  attempts: number;
}): Promise<boolean> {
  const updated = await db
    .update(runs)
    .set({ attempts: sql`${runs.attempts} - 1` })
    .where(and(eq(runs.id, runId), eq(runs.owner, owner), eq(runs.attempts, attempts)))
    .returning({ id: runs.id });
  return updated.length === 1;
}

/** Channel on which released runs are announced, so other instances sweep at once instead of at their next tick. */
export const RUNS_CHANNEL = "hitl_runs";

/**
 * Hand the active runs of `owner` over to whoever sweeps next: no owner (its late writes are refused), lease already
 * expired, announced on {@link RUNS_CHANNEL} at commit. A draining instance calls it for its own runs (announced with
 * its id: the others sweep). With `runId`, only that run: its execution here stopped because the database went away
 * mid-step (a failover), and it continues from its last committed checkpoint — announced with a payload that is no
 * instance's id, so every instance, this one too, sweeps at once. Returns the ids released.
 */
export async function releaseRuns({
  db,
  owner,
  runId,
  uncount = false,
}: {
  db: Queryable;
  owner: string;
  runId?: string;
  /** The claim being given back was no crash (the database was away): it does not count as an attempt. */
  uncount?: boolean;
}): Promise<string[]> {
  const only = runId === undefined ? sql.empty() : sql` AND id = ${runId}`;
  const payload = runId === undefined ? owner : "released";
  const attempts = uncount ? sql`, attempts = greatest(attempts - 1, 0)` : sql.empty();
  const result = await db.execute(sql`WITH released AS (
    UPDATE runs SET owner = NULL, lease_expires_at = now() - interval '1 millisecond'${attempts}
    WHERE owner = ${owner} AND status IN ('queued', 'running')${only}
    RETURNING id
  ), announced AS (
    SELECT pg_notify(${RUNS_CHANNEL}, ${payload}) WHERE EXISTS (SELECT 1 FROM released)
  )
  SELECT id, (SELECT count(*) FROM announced)::int AS announced FROM released`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { id: string }[];
  return rows.map((r) => r.id);
}

/**
 * Let the sweepers take over the active runs of owners known to be dead (a process gone on this machine) without
 * waiting for their leases: the leases end now. The takeover itself is the ordinary expired-lease claim.
 */
export async function expireLeasesOf({ db, owners }: { db: Queryable; owners: string[] }): Promise<number> {
  if (owners.length === 0) return 0;
  const rows = await db
    .update(runs)
    .set({ leaseExpiresAt: sql`now() - interval '1 millisecond'` })
    .where(
      and(
        inArray(runs.owner, owners),
        inArray(runs.status, [...ACTIVE_RUN_STATUSES]),
        sql`(${runs.leaseExpiresAt} IS NULL OR ${runs.leaseExpiresAt} >= now())`,
      ),
    )
    .returning({ id: runs.id });
  return rows.length;
}

/** A recovered run made progress (finished a step): it is not crash-looping, so its attempt count starts over. */
export async function resetRunAttempts({
  db,
  runId,
  owner,
}: {
  db: Queryable;
  runId: string;
  owner: string;
}) {
  await db
    .update(runs)
    .set({ attempts: 1 })
    .where(and(eq(runs.id, runId), eq(runs.owner, owner)));
}

/** Replace a run's stored input (a fork fills in the branch's first checkpoint once it exists). */
export async function setRunInput({
  db,
  runId,
  input,
}: {
  db: Queryable;
  runId: string;
  input: unknown;
}): Promise<Run | undefined> {
  const [stored] = await db.select({ threadId: runs.threadId }).from(runs).where(eq(runs.id, runId));
  if (!stored) return undefined;
  const [row] = await db
    .update(runs)
    .set({ input: await sealThreadJson(db, stored.threadId, input) })
    .where(eq(runs.id, runId))
    .returning();
  return row ? { ...row, input } : undefined;
}

/**
 * The thread's latest fork run (time travel: a run of kind `fork`), or undefined: whether the thread has more than one
 * line, and what its newest branch is for.
 */
export async function lastFork({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<{ id: string; input: unknown } | undefined> {
  const [row] = await db
    .select({ id: runs.id, input: runs.input })
    .from(runs)
    .where(and(eq(runs.threadId, threadId), eq(runs.kind, "fork")))
    .orderBy(desc(runs.createdAt))
    .limit(1);
  return row ? { id: row.id, input: await openThreadJson(db, threadId, row.input) } : undefined;
}
