import "server-only";
import { open } from "node:fs/promises";
import { join, resolve } from "node:path";
import { readCutoff, truncateThreadRows } from "@/lib/checkpoint/retention";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { compactThreadEvents } from "@/lib/db/queries/events";
import {
  deleteArchivedThread,
  isThreadSettled,
  listFinishedThreads,
  readThreadArchive,
} from "@/lib/db/queries/retention";
import { lockThread } from "@/lib/db/queries/threads";
import type { Tx } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";
import { ensurePrivateDir } from "@/lib/platform/private-files";

/*
 * The retention policy: the one place that says how storage stays bounded. `npm run prune` and the Admin page
 * (POST /api/retention/apply) both run `applyRetention` with it. Three steps, each touching only finished threads
 * (completed, failed or closed, with no active run and no pending decision, re-checked under the thread's row lock),
 * so a pending thread is never changed:
 *   1. history — a thread finished for `truncateAfterMs` keeps the last `keepCheckpoints` checkpoints of its head
 *      chain; the oldest kept becomes a root marked `truncated`; a branch younger than the cutoff is kept whole.
 *   2. events — the event log of runs ended `compactAfterMs` ago is compacted: each message's token chunks become
 *      one event, superseded snapshots go (seq order kept); a reconnect from before the compacted seq gets the last
 *      snapshot instead.
 *   3. archive — threads idle for `archiveAfterMs` (with every side effect settled) are written as JSON lines to
 *      `archiveDir` and deleted; their decisions, effects, refunds, outbox and audit rows stay.
 * Every step is safe to interrupt and to run again. The ledgers and the audit trail are never deleted.
 */

export interface RetentionPolicy {
  /** Checkpoints a finished thread keeps of its head chain (≥ 1). */
  keepCheckpoints: number;
  /** A thread is truncated once finished (last updated) this long. */
  truncateAfterMs: number;
  /** A finished thread's event log is compacted this long after its last event. */
  compactAfterMs: number;
  /** Finished threads idle this long are archived and deleted; null = never. */
  archiveAfterMs: number | null;
  /** Folder of the archive's JSON lines files (one file per day the policy ran). */
  archiveDir: string;
}

const HOUR = 3_600_000;

/** The policy configured by the environment (RETENTION_* in lib/platform/env.ts; defaults there). */
export function defaultRetentionPolicy(): RetentionPolicy {
  return {
    keepCheckpoints: env.RETENTION_KEEP_CHECKPOINTS,
    truncateAfterMs: env.RETENTION_TRUNCATE_AFTER_HOURS * HOUR,
    compactAfterMs: env.RETENTION_COMPACT_AFTER_MINUTES * 60_000,
    archiveAfterMs:
      env.RETENTION_ARCHIVE_AFTER_DAYS > 0 ? env.RETENTION_ARCHIVE_AFTER_DAYS * 24 * HOUR : null,
    archiveDir: env.RETENTION_ARCHIVE_DIR,
  };
}

export const RETENTION_STEPS = ["history", "events", "archive"] as const;
export type RetentionStep = (typeof RETENTION_STEPS)[number];

export interface RetentionStepReport {
  step: RetentionStep;
  /** Checkpoints/events/threads older than this (ISO, database clock) were candidates. */
  cutoff: string | null;
  threadsScanned: number;
  /** Threads changed (or that would be, in a dry run). */
  threadsChanged: number;
  /** Candidates left alone: no longer finished, a run or a decision appeared, or an effect is unsettled. */
  threadsSkipped: number;
  checkpointsDeleted: number;
  writesDeleted: number;
  blobsDeleted: number;
  /** Kept checkpoints that became roots marked `truncated`. */
  rootsMarked: number;
  eventsDeleted: number;
  threadsArchived: number;
  /** The archive file written to (archive step). */
  archiveFile: string | null;
  durationMs: number;
}

export interface RetentionReport {
  dryRun: boolean;
  policy: RetentionPolicy;
  steps: RetentionStepReport[];
}

export interface ApplyRetentionOptions {
  db: AppDb;
  policy?: RetentionPolicy;
  /** Count what would change; change nothing (nothing is archived either). */
  dryRun?: boolean;
  /** Which steps to run, in policy order (default all). */
  steps?: readonly RetentionStep[];
  /** Who runs it: the audit entries name them (nothing is audited in a dry run). */
  actor: Pick<Principal, "id" | "label" | "role">;
  batchSize?: number;
  onStep?: (report: RetentionStepReport) => void;
  /** Date the archive file is named after (default today, UTC). */
  now?: Date;
  /** Audit a run that changed nothing too (default; the schedule passes false: one entry an hour would say nothing). */
  auditUnchanged?: boolean;
}

/** What a step reads of the options (the rest is applyRetention's). */
type StepOptions = Required<Omit<ApplyRetentionOptions, "onStep" | "steps" | "now" | "auditUnchanged">>;

/** A dry run executes a step's statements and then rolls them back: its counts are exact. */
const DRY_RUN_ROLLBACK = "internal:dry_run_rollback";
class DryRunRollback extends Error {
  readonly code = DRY_RUN_ROLLBACK;
}

function emptyStep(step: RetentionStep, cutoff: string | null): RetentionStepReport {
  return {
    step,
    cutoff,
    threadsScanned: 0,
    threadsChanged: 0,
    threadsSkipped: 0,
    checkpointsDeleted: 0,
    writesDeleted: 0,
    blobsDeleted: 0,
    rootsMarked: 0,
    eventsDeleted: 0,
    threadsArchived: 0,
    archiveFile: null,
    durationMs: 0,
  };
}

/** Run `work` on one locked, settled thread in its own transaction; false when the thread was skipped. */
async function onSettledThread(
  db: AppDb,
  threadId: string,
  dryRun: boolean,
  work: (tx: Tx) => Promise<void>,
): Promise<boolean> {
  try {
    return await db.transaction(async (tx) => {
      if (!(await lockThread({ tx, threadId }))) return false;
      // A new statement, so a snapshot taken after the lock: it sees a run claimed while we waited.
      if (!(await isThreadSettled({ db: tx, threadId }))) return false;
      await work(tx);
      if (dryRun) throw new DryRunRollback();
      return true;
    });
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === DRY_RUN_ROLLBACK) return true;
    throw error;
  }
}

async function truncateHistories(o: StepOptions) {
  const { db, policy, dryRun, batchSize } = o;
  const cutoff = await readCutoff({ db, olderThanMs: policy.truncateAfterMs });
  const report = emptyStep("history", cutoff);
  for (let after = ""; ; ) {
    const batch = await listFinishedThreads({ db, after, limit: batchSize, cutoff });
    if (batch.length === 0) break;
    after = batch.at(-1)!;
    report.threadsScanned += batch.length;
    for (const threadId of batch) {
      let changed = false;
      const settled = await onSettledThread(db, threadId, false, async (tx) => {
        const r = await truncateThreadRows({
          db: tx,
          threadId,
          keepLast: policy.keepCheckpoints,
          cutoff,
          dryRun,
        });
        changed = r.checkpoints + r.roots > 0;
        report.checkpointsDeleted += r.checkpoints;
        report.writesDeleted += r.writes;
        report.blobsDeleted += r.blobs;
        report.rootsMarked += r.roots;
      });
      if (!settled) report.threadsSkipped += 1;
      else if (changed) report.threadsChanged += 1;
    }
  }
  return report;
}

async function compactEvents(o: StepOptions) {
  const { db, policy, dryRun, batchSize } = o;
  const cutoff = await readCutoff({ db, olderThanMs: policy.compactAfterMs });
  const report = emptyStep("events", cutoff);
  for (let after = ""; ; ) {
    const batch = await listFinishedThreads({ db, after, limit: batchSize, cutoff, compactable: true });
    if (batch.length === 0) break;
    after = batch.at(-1)!;
    report.threadsScanned += batch.length;
    for (const threadId of batch) {
      let deleted = 0;
      const settled = await onSettledThread(db, threadId, dryRun, async (tx) => {
        deleted = (await compactThreadEvents({ db: tx, threadId })).eventsDeleted;
      });
      if (!settled) report.threadsSkipped += 1;
      else {
        report.threadsChanged += 1;
        report.eventsDeleted += deleted;
      }
    }
  }
  return report;
}

/**
 * Archive a batch of threads in one transaction: lock and re-check each, append their JSON lines to the file and
 * flush it to disk, then delete them and audit the batch. A crash after the flush and before the commit leaves lines
 * of threads that still exist: archiving them again appends them again (restore by the last line per thread id).
 */
async function archiveBatch(o: StepOptions, batch: string[], file: string, report: RetentionStepReport) {
  const { db, dryRun, actor } = o;
  await db.transaction(async (tx) => {
    const ready: string[] = [];
    for (const threadId of batch) {
      if (!(await lockThread({ tx, threadId }))) continue;
      if (await isThreadSettled({ db: tx, threadId, quietEffects: true })) ready.push(threadId);
    }
    report.threadsSkipped += batch.length - ready.length;
    if (ready.length === 0) return;
    if (!dryRun) {
      const lines: string[] = [];
      for (const threadId of ready) {
        const rows = await readThreadArchive({ db: tx, threadId });
        lines.push(JSON.stringify({ archivedAt: new Date().toISOString(), threadId, ...rows }));
      }
      const handle = await open(file, "a", 0o600);
      try {
        await handle.appendFile(`${lines.join("\n")}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      for (const threadId of ready) await deleteArchivedThread({ db: tx, threadId });
      await recordAudit({
        db: tx,
        entries: [{ action: "archive", actor, detail: { file, threads: ready.length, threadIds: ready } }],
      });
    }
    report.threadsArchived += ready.length;
    report.threadsChanged += ready.length;
  });
}

async function archiveThreads(o: StepOptions & { now: Date }) {
  const { db, policy, dryRun, batchSize, now } = o;
  if (policy.archiveAfterMs === null) return emptyStep("archive", null);
  const cutoff = await readCutoff({ db, olderThanMs: policy.archiveAfterMs });
  const report = emptyStep("archive", cutoff);
  const file = resolve(join(policy.archiveDir, `threads-${now.toISOString().slice(0, 10)}.jsonl`));
  if (!dryRun) ensurePrivateDir(policy.archiveDir);
  report.archiveFile = dryRun ? null : file;
  for (let after = ""; ; ) {
    const batch = await listFinishedThreads({ db, after, limit: Math.min(batchSize, 100), cutoff });
    if (batch.length === 0) break;
    after = batch.at(-1)!;
    report.threadsScanned += batch.length;
    await archiveBatch(o, batch, file, report);
  }
  return report;
}

/**
 * Apply the retention policy (see the top of this file), step by step; audited as one `prune` entry with the report
 * (and one `archive` entry per archived batch) unless it is a dry run.
 */
export async function applyRetention(options: ApplyRetentionOptions): Promise<RetentionReport> {
  const policy = options.policy ?? defaultRetentionPolicy();
  if (!Number.isInteger(policy.keepCheckpoints) || policy.keepCheckpoints < 1) {
    throw new Error("keepCheckpoints must be an integer ≥ 1");
  }
  const o = {
    db: options.db,
    policy,
    dryRun: options.dryRun ?? false,
    actor: options.actor,
    batchSize: options.batchSize ?? 500,
    now: options.now ?? new Date(),
  };
  const steps = options.steps ?? RETENTION_STEPS;
  const report: RetentionReport = { dryRun: o.dryRun, policy, steps: [] };
  for (const step of RETENTION_STEPS.filter((s) => steps.includes(s))) {
    const started = performance.now();
    const r =
      step === "history"
        ? await truncateHistories(o)
        : step === "events"
          ? await compactEvents(o)
          : await archiveThreads(o);
    r.durationMs = Math.round(performance.now() - started);
    report.steps.push(r);
    options.onStep?.(r);
  }
  const changed = report.steps.some((s) => s.threadsChanged > 0 || s.threadsArchived > 0);
  if (!o.dryRun && (changed || options.auditUnchanged !== false)) {
    await recordAudit({
      db: o.db,
      entries: [{ action: "prune", actor: o.actor, detail: { policy: { ...policy }, steps: report.steps } }],
    });
  }
  return report;
}
