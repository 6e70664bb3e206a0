import "server-only";
import {
  checkpointTablesSize,
  findPrunableThreads,
  listCheckpointThreadIds,
  pruneThreadRows,
  readCutoff,
} from "@/lib/checkpoint/retention";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { listPendingDecisions } from "@/lib/db/queries/decisions";
import { getActiveRun } from "@/lib/db/queries/runs";
import { lockThread } from "@/lib/db/queries/threads";

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
    const pruned = await pruneThreadRows({ db: tx, threadId, keepLatest, cutoff, dryRun });
    return { kind: "pruned", ...pruned } as const;
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
  const cutoff = await readCutoff({ db, olderThanMs });
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
  report.bytesBefore = await checkpointTablesSize({ db });
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

/**
 * The pruning a supervisor asks for (`POST /api/retention/prune`): {@link pruneCheckpoints}, and — unless it was a dry
 * run — the report written to the audit trail under `by`.
 */
export async function pruneOnRequest({
  by,
  ...options
}: Pick<PruneOptions, "db" | "keepLatest" | "olderThanMs" | "dryRun"> & {
  by: Principal;
}): Promise<PruneReport> {
  const report = await pruneCheckpoints(options);
  if (!report.dryRun) {
    await recordAudit({ db: options.db, entries: [{ action: "prune", actor: by, detail: { ...report } }] });
  }
  return report;
}
