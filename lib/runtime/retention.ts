import "server-only";
import { type SQL, sql } from "drizzle-orm";
import type { AppDb } from "@/lib/db/open";
import { listPendingDecisions } from "@/lib/db/queries/decisions";
import { getActiveRun } from "@/lib/db/queries/runs";
import { lockThread } from "@/lib/db/queries/threads";
import type { Queryable } from "@/lib/db/tx";

/*
 * Checkpoint retention. The rules, per thread:
 * - Only the root namespace (checkpoint_ns = '') is pruned. Subgraph namespaces are never touched: their rows hang
 *   off a task of some root checkpoint, and telling which root they belong to would mean parsing LangGraph's task
 *   paths. Our graphs have no subgraphs today; a graph with them keeps its subgraph checkpoints in full.
 * - Kept: the latest `keepLatest` root checkpoints (by checkpoint id, the saver's "latest"), every checkpoint younger
 *   than the cutoff, and every ancestor (parent chain) of anything kept. So history and time travel work for every
 *   checkpoint that remains, and a linear history is never shortened: what goes is branches that no kept checkpoint
 *   descends from (forks abandoned by time travel). Equivalently, a checkpoint is deleted when it and all its
 *   descendants are older than the cutoff and none is among the latest N.
 * - With the checkpoints go their pending writes, and the blobs (per thread, namespace, channel, version) that no
 *   remaining root checkpoint's `channel_versions` refers to any more. A thread with nothing to delete is not written.
 * - A thread with an active run (runs.status queued/running) or a pending decision is skipped. Decisions, refunds,
 *   outbox, events, threads and runs are never deleted (they are the audit trail); `decisions.checkpoint_id` may
 *   then name a pruned checkpoint (the ledger row itself keeps payload and answer).
 * - Each thread is pruned in its own transaction: lock the thread row FOR UPDATE, then — in a new statement, so
 *   with a snapshot taken after the lock — check activity, then delete in one statement. `claimRun` creates runs
 *   under the same row lock, so a run starting meanwhile either commits first (and the thread is skipped) or waits
 *   for the prune to commit. Interrupting the job loses nothing; re-running it deletes nothing more.
 * - Checkpoints of thread ids with no `threads` row (graphs invoked directly, tests) have no ledger to consult and
 *   no row to lock: skipped unless `includeUnregistered`.
 */

export interface PruneOptions {
  db: AppDb;
  /** Root checkpoints to keep per thread, newest first (at least 1). */
  keepLatest: number;
  /** Only checkpoints older than this are candidates. */
  olderThanMs: number;
  /** Count what would be deleted; delete nothing. */
  dryRun?: boolean;
  /** Also prune thread ids that have checkpoints but no `threads` row. */
  includeUnregistered?: boolean;
  /** Threads scanned per batch; `onProgress` is called after each batch. */
  batchSize?: number;
  onProgress?: (report: PruneReport) => void;
}

export interface PruneReport {
  dryRun: boolean;
  keepLatest: number;
  olderThanMs: number;
  /** Checkpoints created after this instant (ISO, database clock) were kept. */
  cutoff: string;
  /** Thread ids with checkpoints, examined. */
  threadsScanned: number;
  /** Threads that had something to delete, active or not. */
  threadsWithCandidates: number;
  /** Threads where rows were deleted (or would be, in a dry run). */
  threadsPruned: number;
  /** Threads with candidates left alone: an active run or a pending decision. */
  threadsSkippedActive: number;
  /** Threads with candidates but no `threads` row, left alone (see `includeUnregistered`). */
  threadsSkippedUnregistered: number;
  checkpointsDeleted: number;
  writesDeleted: number;
  blobsDeleted: number;
  /** Stored size of the deleted rows' values (checkpoint and metadata JSON, blob and write bytes). */
  bytesDeleted: number;
  /** Size of the three checkpoint tables with indexes before the run. Deleted space is reused after VACUUM. */
  bytesBefore: number;
  durationMs: number;
}

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/**
 * The next `limit` distinct thread ids that have checkpoints, after `after` (byte order): a loose index scan of the
 * checkpoints primary key, one index probe per thread instead of reading every checkpoint row.
 */
export async function listCheckpointThreadIds({
  db,
  after,
  limit,
}: {
  db: Queryable;
  after: string;
  limit: number;
}): Promise<string[]> {
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`WITH RECURSIVE ids(id, n) AS (
      SELECT (SELECT thread_id FROM checkpoints WHERE thread_id > ${after} ORDER BY thread_id LIMIT 1), 1
      UNION ALL
      SELECT (SELECT c.thread_id FROM checkpoints c WHERE c.thread_id > ids.id ORDER BY c.thread_id LIMIT 1), n + 1
      FROM ids WHERE ids.id IS NOT NULL AND n < ${limit}
    )
    SELECT id FROM ids WHERE id IS NOT NULL`),
  );
  return rows.map((r) => r.id);
}

/**
 * Of `threadIds`, those with something to prune. A thread has something to prune exactly when it has a root
 * checkpoint without children (a branch tip) that is older than the cutoff and not among its latest `keepLatest`:
 * everything under a deleted checkpoint is deleted too, so a deletion always includes such a tip. The LATERAL
 * subqueries (with LIMIT) keep every lookup inside one thread's index range: as a plain EXISTS the planner may answer
 * the whole batch with one anti-join over the entire checkpoints table.
 */
export async function findPrunableThreads({
  db,
  threadIds,
  keepLatest,
  cutoff,
}: {
  db: Queryable;
  threadIds: string[];
  keepLatest: number;
  cutoff: string;
}): Promise<string[]> {
  if (threadIds.length === 0) return [];
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT t.id FROM unnest(${sql.param(threadIds)}::text[]) AS t(id)
    CROSS JOIN LATERAL (
      SELECT checkpoint_id FROM checkpoints WHERE thread_id = t.id AND checkpoint_ns = ''
      ORDER BY checkpoint_id DESC OFFSET ${keepLatest - 1} LIMIT 1
    ) nth
    CROSS JOIN LATERAL (
      SELECT 1 FROM checkpoints c
      WHERE c.thread_id = t.id AND c.checkpoint_ns = '' AND c.checkpoint_id < nth.checkpoint_id
        AND c.created_at <= ${cutoff}::timestamptz
        AND NOT EXISTS (SELECT 1 FROM checkpoints ch WHERE ch.thread_id = t.id AND ch.checkpoint_ns = ''
          AND ch.parent_checkpoint_id = c.checkpoint_id)
      LIMIT 1
    ) tip`),
  );
  return rows.map((r) => r.id);
}

/** The statement that prunes one thread (or, `dryRun`, counts what it would prune). See the rules above. */
function pruneThreadSql(threadId: string, keepLatest: number, cutoff: string, dryRun: boolean): SQL {
  // The thread's root-namespace rows of the table aliased `alias`.
  const root = (alias: string) => {
    const t = sql.identifier(alias);
    return sql`${t}.thread_id = ${threadId} AND ${t}.checkpoint_ns = ''`;
  };
  const plan = sql`WITH RECURSIVE seed AS (
    (SELECT c.checkpoint_id FROM checkpoints c WHERE ${root("c")} ORDER BY c.checkpoint_id DESC LIMIT ${keepLatest})
    UNION
    SELECT c.checkpoint_id FROM checkpoints c WHERE ${root("c")} AND c.created_at > ${cutoff}::timestamptz
  ), kept AS (
    SELECT c.checkpoint_id, c.parent_checkpoint_id FROM checkpoints c
    WHERE ${root("c")} AND c.checkpoint_id IN (SELECT checkpoint_id FROM seed)
    UNION
    -- One primary-key probe per ancestor (the LIMIT stops the planner from hashing the whole thread at every level).
    SELECT p.checkpoint_id, p.parent_checkpoint_id FROM kept k
    CROSS JOIN LATERAL (
      SELECT p.checkpoint_id, p.parent_checkpoint_id FROM checkpoints p
      WHERE ${root("p")} AND p.checkpoint_id = k.parent_checkpoint_id LIMIT 1
    ) p
  ), doomed AS (
    SELECT c.checkpoint_id FROM checkpoints c
    WHERE ${root("c")} AND NOT EXISTS (SELECT 1 FROM kept k WHERE k.checkpoint_id = c.checkpoint_id)
  ), live AS (
    SELECT DISTINCT v.channel, v.version FROM kept k
    JOIN checkpoints c ON ${root("c")} AND c.checkpoint_id = k.checkpoint_id
    CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version)
  ), gone_blobs AS (
    SELECT b.channel, b.version FROM checkpoint_blobs b
    WHERE ${root("b")} AND EXISTS (SELECT 1 FROM doomed)
      AND NOT EXISTS (SELECT 1 FROM live l
        WHERE b.channel = l.channel COLLATE "C" AND b.version = l.version COLLATE "C")
  )`;
  if (dryRun) {
    return sql`${plan}
    SELECT (SELECT count(*) FROM doomed)::int AS checkpoints,
      (SELECT count(*) FROM checkpoint_writes w JOIN doomed d ON ${root("w")} AND w.checkpoint_id = d.checkpoint_id)::int
        AS writes,
      (SELECT count(*) FROM gone_blobs)::int AS blobs,
      ((SELECT coalesce(sum(pg_column_size(c.checkpoint) + pg_column_size(c.metadata)), 0) FROM checkpoints c
          JOIN doomed d ON ${root("c")} AND c.checkpoint_id = d.checkpoint_id)
        + (SELECT coalesce(sum(octet_length(w.blob)), 0) FROM checkpoint_writes w
          JOIN doomed d ON ${root("w")} AND w.checkpoint_id = d.checkpoint_id)
        + (SELECT coalesce(sum(octet_length(b.blob)), 0) FROM checkpoint_blobs b
          JOIN gone_blobs g ON ${root("b")} AND b.channel = g.channel AND b.version = g.version))::text AS bytes`;
  }
  return sql`${plan}, del_writes AS (
    DELETE FROM checkpoint_writes w USING doomed d WHERE ${root("w")} AND w.checkpoint_id = d.checkpoint_id
    RETURNING octet_length(w.blob) AS bytes
  ), del_blobs AS (
    DELETE FROM checkpoint_blobs b USING gone_blobs g
    WHERE ${root("b")} AND b.channel = g.channel AND b.version = g.version
    RETURNING coalesce(octet_length(b.blob), 0) AS bytes
  ), del_checkpoints AS (
    DELETE FROM checkpoints c USING doomed d WHERE ${root("c")} AND c.checkpoint_id = d.checkpoint_id
    RETURNING pg_column_size(c.checkpoint) + pg_column_size(c.metadata) AS bytes
  )
  SELECT (SELECT count(*) FROM del_checkpoints)::int AS checkpoints, (SELECT count(*) FROM del_writes)::int AS writes,
    (SELECT count(*) FROM del_blobs)::int AS blobs,
    ((SELECT coalesce(sum(bytes), 0) FROM del_checkpoints) + (SELECT coalesce(sum(bytes), 0) FROM del_writes)
      + (SELECT coalesce(sum(bytes), 0) FROM del_blobs))::text AS bytes`;
}

type ThreadOutcome =
  | { kind: "skipped"; reason: "active" | "unregistered" }
  | { kind: "pruned"; checkpoints: number; writes: number; blobs: number; bytes: number };

/** Prune one thread in its own transaction (lock, re-check activity, delete). */
export async function pruneThreadCheckpoints({
  db,
  threadId,
  keepLatest,
  cutoff,
  dryRun = false,
  includeUnregistered = false,
}: {
  db: AppDb;
  threadId: string;
  keepLatest: number;
  cutoff: string;
  dryRun?: boolean;
  includeUnregistered?: boolean;
}): Promise<ThreadOutcome> {
  return db.transaction(async (tx) => {
    const thread = await lockThread({ tx, threadId });
    if (!thread && !includeUnregistered) return { kind: "skipped", reason: "unregistered" } as const;
    // New statements, so new snapshots: they see a run whose claim committed while we waited for the lock.
    const active =
      (await getActiveRun({ db: tx, threadId })) !== undefined ||
      (await listPendingDecisions({ db: tx, threadId })).length > 0;
    if (active) return { kind: "skipped", reason: "active" } as const;
    const [row] = rowsOf<{ checkpoints: number; writes: number; blobs: number; bytes: string }>(
      await tx.execute(pruneThreadSql(threadId, keepLatest, cutoff, dryRun)),
    );
    return {
      kind: "pruned",
      checkpoints: row?.checkpoints ?? 0,
      writes: row?.writes ?? 0,
      blobs: row?.blobs ?? 0,
      bytes: Number(row?.bytes ?? 0),
    } as const;
  });
}

/**
 * Delete old checkpoints of inactive threads, thread by thread (see the rules at the top of this file). Safe to
 * interrupt and to run again; a second run with the same settings deletes nothing more.
 */
export async function pruneCheckpoints(options: PruneOptions): Promise<PruneReport> {
  const { db, keepLatest, olderThanMs, dryRun = false, includeUnregistered = false, onProgress } = options;
  if (!Number.isInteger(keepLatest) || keepLatest < 1) throw new Error("keepLatest must be an integer ≥ 1");
  if (!Number.isFinite(olderThanMs) || olderThanMs < 0) throw new Error("olderThanMs must be ≥ 0");
  const batchSize = options.batchSize ?? 500;
  const started = performance.now();
  // One cutoff for the whole run, by the database clock (the clock that stamped created_at).
  const [cutoffRow] = rowsOf<{ cutoff: string }>(
    await db.execute(sql`SELECT to_char((now() - make_interval(secs => ${olderThanMs / 1000})) AT TIME ZONE 'UTC',
      'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cutoff`),
  );
  const cutoff = cutoffRow?.cutoff;
  if (!cutoff) throw new Error("pruneCheckpoints: could not read the database clock");
  const report: PruneReport = {
    dryRun,
    keepLatest,
    olderThanMs,
    cutoff,
    threadsScanned: 0,
    threadsWithCandidates: 0,
    threadsPruned: 0,
    threadsSkippedActive: 0,
    threadsSkippedUnregistered: 0,
    checkpointsDeleted: 0,
    writesDeleted: 0,
    blobsDeleted: 0,
    bytesDeleted: 0,
    bytesBefore: 0,
    durationMs: 0,
  };
  const [size] = rowsOf<{ bytes: string }>(
    await db.execute(sql`SELECT (pg_total_relation_size('checkpoints') + pg_total_relation_size('checkpoint_blobs')
      + pg_total_relation_size('checkpoint_writes'))::text AS bytes`),
  );
  report.bytesBefore = Number(size?.bytes ?? 0);
  let after = "";
  for (;;) {
    const batch = await listCheckpointThreadIds({ db, after, limit: batchSize });
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!;
    report.threadsScanned += batch.length;
    const candidates = await findPrunableThreads({ db, threadIds: batch, keepLatest, cutoff });
    report.threadsWithCandidates += candidates.length;
    for (const threadId of candidates) {
      const outcome = await pruneThreadCheckpoints({
        db,
        threadId,
        keepLatest,
        cutoff,
        dryRun,
        includeUnregistered,
      });
      if (outcome.kind === "skipped") {
        if (outcome.reason === "active") report.threadsSkippedActive += 1;
        else report.threadsSkippedUnregistered += 1;
        continue;
      }
      if (outcome.checkpoints + outcome.writes + outcome.blobs > 0) report.threadsPruned += 1;
      report.checkpointsDeleted += outcome.checkpoints;
      report.writesDeleted += outcome.writes;
      report.blobsDeleted += outcome.blobs;
      report.bytesDeleted += outcome.bytes;
    }
    report.durationMs = Math.round(performance.now() - started);
    onProgress?.({ ...report });
  }
  report.durationMs = Math.round(performance.now() - started);
  return report;
}
