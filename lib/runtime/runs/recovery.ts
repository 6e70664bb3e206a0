import "server-only";
import { EventType } from "@ag-ui/core";
import { type AguiEvent, closeOpenEvents } from "@/lib/agui";
import { AppError } from "@/lib/contract/errors";
import { type AppDb, type Database, getDatabase } from "@/lib/db/client";
import { readRunEvents } from "@/lib/db/queries/events";
import { listLocalRunOwners, touchInstance } from "@/lib/db/queries/instances";
import { claimExpiredRun, expireLeasesOf, extendLeases, uncountClaim } from "@/lib/db/queries/runs";
import type { Run } from "@/lib/db/schema";
import { env } from "@/lib/platform/env";
import { logger, runFields } from "@/lib/platform/observability/logger";
import { metrics } from "@/lib/platform/observability/metrics";
import { peekSingleton, setSingleton } from "@/lib/platform/singleton";
import { instanceId, instanceLabels, isGoneHere } from "../../platform/instance";
import { isDraining, reportReachable, reportUnreachable } from "../../platform/status";
import { registeredAgentKeys } from "../agents/registry";
import { EventSink } from "./event-sink";
import { failRun } from "./execute";
import { abortCancelledRun, activeRuns, onRunEnded, startRunInBackground } from "./executor";
import { migratePausedThreads } from "./migrate";
import { startIdleQueues, startNextInputSoon } from "./queued-inputs";

interface Recovery {
  heartbeat: NodeJS.Timeout;
  sweeper: NodeJS.Timeout;
}
/** This process's timers once recovery started (process-wide: one heartbeat however often the module is bundled). */
const RECOVERY = "recovery-timers";

/**
 * Keep this process's runs claimed and finish other processes' abandoned runs. A heartbeat extends the leases of the
 * runs executing here (and stops any that another instance took over) and says this instance is alive; a sweeper, at
 * start and then periodically, takes over runs whose lease expired and continues them from their last checkpoint.
 * Both keep running while the database is unreachable and work again when it is back. Idempotent per process.
 */
export async function startRecovery(): Promise<void> {
  if (peekSingleton<Recovery>(RECOVERY)) return;
  const database = await getDatabase();
  // The queue of input that waited for a run (double texting) moves on when the run ends.
  onRunEnded((threadId, inputWaiting) => startNextInputSoon({ database, threadId, inputWaiting }));
  const heartbeat = setInterval(() => void beat(), Math.max(250, Math.floor(env.RUN_LEASE_MS / 3)));
  const sweeper = setInterval(() => void sweep(false), env.RUN_SWEEP_INTERVAL_MS);
  heartbeat.unref();
  sweeper.unref();
  setSingleton<Recovery>(RECOVERY, { heartbeat, sweeper });
  // The embedded database belongs to this one process: whatever was active when it last stopped is orphaned now.
  await sweep(database.kind === "pglite");
}

/** Draining: take no more runs. The heartbeat goes on: the runs still executing here keep their leases. */
export function stopSweeping(): void {
  const timers = peekSingleton<Recovery>(RECOVERY);
  if (timers) clearInterval(timers.sweeper);
}

/** The process is about to exit: its runs were finished or released. */
export function stopHeartbeat(): void {
  const timers = peekSingleton<Recovery>(RECOVERY);
  if (timers) clearInterval(timers.heartbeat);
}

/** Sweep now rather than at the next tick (another instance released runs). */
export function sweepSoon(): void {
  if (peekSingleton<Recovery>(RECOVERY)) void sweep(false);
}

async function beat(): Promise<void> {
  const runs = activeRuns();
  // Only runs registered before the update can be judged by it: a run claimed while the update was in flight is
  // not in its snapshot, and stopping it for that would strand it (it is ours, so no sweeper would take it).
  const judged = new Set(runs.keys());
  try {
    const { db } = await getDatabase();
    await touchInstance({ db, id: instanceId() });
    if (runs.size > 0) {
      const leases = await extendLeases({ db, owner: instanceId(), leaseMs: env.RUN_LEASE_MS });
      const owned = new Set(leases.map((l) => l.id));
      for (const [id, run] of runs) if (judged.has(id) && !owned.has(id)) run.abort.abort();
      // Asked to stop (the notification may not have reached this process): stop them now.
      for (const lease of leases)
        if (lease.cancelRequestedBy) abortCancelledRun(lease.id, lease.cancelRequestedBy);
    }
    reportReachable("heartbeat");
  } catch (error) {
    reportUnreachable("heartbeat", error);
  }
}

let sweeping = false;
let sweepAgain = false;

async function sweep(everyActive: boolean): Promise<void> {
  if (sweeping) {
    // A request while a sweep runs (a release announced mid-sweep) must not be lost: sweep once more after it.
    sweepAgain = true;
    return;
  }
  if (isDraining()) return;
  sweeping = true;
  try {
    const database = await getDatabase();
    const { db } = database;
    // Rolling upgrades: this process takes only runs of agent versions it has; the others wait for an instance that does.
    const keys = registeredAgentKeys();
    await expireLeasesOfGoneOwners(db);
    await takeOverExpiredRuns(database, { everyActive, agentKeys: keys });
    // Input queued behind a run that ended where nobody started the queue (its process died): start it now.
    if (!isDraining()) await startIdleQueues({ database });
    // Paused threads a newer version declares a migration for move onto it (once, whichever instance gets there).
    if (!isDraining()) {
      const migrated = await migratePausedThreads({ database });
      if (migrated > 0)
        logger().info({ threads: migrated }, "migration: moving paused threads onto a newer version");
    }
    reportReachable("sweeper");
  } catch (error) {
    reportUnreachable("sweeper", error);
  } finally {
    sweeping = false;
  }
  if (sweepAgain) {
    sweepAgain = false;
    await sweep(false);
  }
}

/** What a sweep needs to know of the runs executing in this process (a test stands in for the executor). */
export interface ExecutingHere {
  /** The runs executing here now, passed to the claim so it leaves them alone. */
  snapshot(): string[];
  /** Whether a run executes here now (it may have started since the snapshot). */
  has(runId: string): boolean;
}

const executingHere: ExecutingHere = {
  snapshot: () => [...activeRuns().keys()],
  has: (runId) => activeRuns().has(runId),
};

/**
 * Claim runs whose lease expired, one at a time, and continue each from its last checkpoint (or end it with a
 * visible error when it has crashed too often). Stops when none is left or the process drains.
 */
export async function takeOverExpiredRuns(
  database: Database,
  { everyActive, agentKeys }: { everyActive: boolean; agentKeys?: string[] },
  here: ExecutingHere = executingHere,
  act: {
    start: (run: Run & { lastSeq: number }) => void;
    abandon: (run: Run, lastSeq: number) => Promise<void>;
  } = {
    start: (run) =>
      startRunInBackground({ database, run, startSeq: run.lastSeq, options: { recovered: true } }),
    abandon: (run, lastSeq) => abandon(database.db, run, lastSeq),
  },
): Promise<void> {
  const { db } = database;
  for (;;) {
    if (isDraining()) break;
    const run = await claimExpiredRun({
      db,
      owner: instanceId(),
      leaseMs: env.RUN_LEASE_MS,
      everyActive,
      executingHere: here.snapshot(),
      ...(agentKeys ? { agentKeys } : {}),
    });
    if (!run) break;
    // This process started it after the snapshot above (a claim whose lease, counted from its transaction's start,
    // had run out by its commit): it is executing, and the claim only renewed its lease. Not a takeover, and not an
    // attempt that could exhaust MAX_RUN_ATTEMPTS: the claim's count is taken back (compare-and-set, so a count
    // another writer changed meanwhile stays as it is).
    if (here.has(run.id)) {
      await uncountClaim({ db, runId: run.id, owner: instanceId(), attempts: run.attempts });
      continue;
    }
    metrics().leaseTakeovers.inc({ reason: "lease_expired" });
    if (run.attempts > env.MAX_RUN_ATTEMPTS) {
      logger().error(
        { ...runFields(run), attempts: run.attempts - 1 },
        "recovery: run crashed too many times; marking it failed",
      );
      await act.abandon(run, run.lastSeq);
      continue;
    }
    logger().info(
      { ...runFields(run), attempt: run.attempts },
      "recovery: continuing run from its last checkpoint",
    );
    act.start(run);
  }
}

/**
 * The fast path for a crash or restart on this machine: the runs of an instance of our own boot and pid namespace
 * whose pid is gone need not wait for their leases. Nothing is inferred from hostnames, and an owner we cannot check
 * (another machine, another container, an id with no `instances` row) keeps its lease.
 */
async function expireLeasesOfGoneOwners(db: AppDb): Promise<void> {
  const { bootId, pidNamespace } = instanceLabels();
  if (!bootId || !pidNamespace) return;
  const owners = await listLocalRunOwners({ db, bootId, pidNamespace, except: instanceId() });
  const gone = owners.filter((o) => isGoneHere(o.id, o.pid)).map((o) => o.id);
  const expired = gone.length > 0 ? await expireLeasesOf({ db, owners: gone }) : 0;
  if (expired > 0) {
    metrics().leaseTakeovers.inc({ reason: "owner_gone" }, expired);
    logger().info(
      { instances: gone, runs: expired },
      "recovery: instances gone from this machine; taking over their runs",
    );
  }
}

/** Give up on a run that keeps crashing: close what it left open and end it with a visible RUN_ERROR. */
async function abandon(db: AppDb, run: Run, lastSeq: number): Promise<void> {
  const owner = instanceId();
  const logged = (await readRunEvents({ db, threadId: run.threadId, runId: run.id })).map(
    (e) => e.event as unknown as AguiEvent,
  );
  const error = new AppError(
    "internal:run_abandoned",
    `The run failed ${run.attempts - 1} times in a row and was stopped; the last error is in the server log.`,
  );
  await failRun({
    db,
    run,
    owner,
    sink: new EventSink(db, run.threadId, run.id, owner, lastSeq),
    fail: (e) => [
      ...closeOpenEvents(logged),
      { type: EventType.RUN_ERROR, message: e.message, code: e.code, timestamp: Date.now() },
    ],
    error,
  });
}
