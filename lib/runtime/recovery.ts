import "server-only";
import { EventType } from "@ag-ui/core";
import { type AguiEvent, closeOpenEvents } from "@/lib/agui";
import { getDatabase } from "@/lib/db/client";
import { readRunEvents } from "@/lib/db/queries/events";
import { claimExpiredRun, claimRunFrom, extendLeases, listActiveRunsOwnedBy } from "@/lib/db/queries/runs";
import type { Run } from "@/lib/db/schema";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { registeredAgentKeys } from "./agent";
import { EventSink } from "./event-sink";
import { activeRuns, failRun, startRunInBackground } from "./executor";
import { instanceId, isDeadLocalOwner, thisHostPrefix } from "./instance";

const KEY = Symbol.for("hitl-console.recovery-timers");
type G = typeof globalThis & { [KEY]?: NodeJS.Timeout[] };

/**
 * Keep this process's runs claimed and finish other processes' abandoned runs. A heartbeat extends the leases of the
 * runs executing here (and stops any that another instance took over); a sweeper, at start and then periodically,
 * takes over runs whose lease expired and continues them from their last checkpoint. Idempotent per process.
 */
export async function startRecovery(): Promise<void> {
  const g = globalThis as G;
  if (g[KEY]) return;
  const database = await getDatabase();
  const heartbeat = setInterval(() => void beat(), Math.max(250, Math.floor(env.RUN_LEASE_MS / 3)));
  const sweeper = setInterval(() => void sweep(false), env.RUN_SWEEP_INTERVAL_MS);
  heartbeat.unref();
  sweeper.unref();
  g[KEY] = [heartbeat, sweeper];
  // The embedded database belongs to this one process: whatever was active when it last stopped is orphaned now.
  await sweep(database.kind === "pglite");
}

async function beat(): Promise<void> {
  const runs = activeRuns();
  if (runs.size === 0) return;
  // Only runs registered before the update can be judged by it: a run claimed while the update was in flight is
  // not in its snapshot, and stopping it for that would strand it (it is ours, so no sweeper would take it).
  const judged = new Set(runs.keys());
  try {
    const { db } = await getDatabase();
    const owned = new Set(await extendLeases({ db, owner: instanceId(), leaseMs: env.RUN_LEASE_MS }));
    for (const [id, run] of runs) if (judged.has(id) && !owned.has(id)) run.abort.abort();
  } catch (error) {
    console.error("[recovery] heartbeat failed:", error instanceof Error ? error.message : error);
  }
}

let sweeping = false;

async function sweep(everyActive: boolean): Promise<void> {
  if (sweeping) return;
  sweeping = true;
  try {
    const { db } = await getDatabase();
    // Rolling upgrades: this process takes only runs of agent versions it has; the others wait for an instance that does.
    const keys = registeredAgentKeys();
    // Runs of a dead process on this host (a crash or a restart) need not wait for their lease to expire.
    const orphans = (
      await listActiveRunsOwnedBy({ db, prefix: thisHostPrefix(), except: instanceId() })
    ).filter((r) => r.owner && isDeadLocalOwner(r.owner) && keys.includes(r.agentKey));
    const claimOrphan = async () => {
      for (let next = orphans.shift(); next; next = orphans.shift()) {
        const run = await claimRunFrom({
          db,
          runId: next.id,
          from: next.owner ?? "",
          owner: instanceId(),
          leaseMs: env.RUN_LEASE_MS,
        });
        if (run) return run;
      }
      return undefined;
    };
    for (;;) {
      const run =
        (await claimOrphan()) ??
        (await claimExpiredRun({
          db,
          owner: instanceId(),
          leaseMs: env.RUN_LEASE_MS,
          everyActive,
          executingHere: [...activeRuns().keys()],
          agentKeys: keys,
        }));
      if (!run) break;
      if (run.attempts > env.MAX_RUN_ATTEMPTS) {
        console.error(`[recovery] run ${run.id} crashed ${run.attempts - 1} times; marking it failed`);
        await abandon(run, run.lastSeq);
        continue;
      }
      console.log(`[recovery] continuing run ${run.id} of thread ${run.threadId} (attempt ${run.attempts})`);
      startRunInBackground(run, run.lastSeq, { recovered: true });
    }
  } catch (error) {
    console.error("[recovery] sweep failed:", error instanceof Error ? error.message : error);
  } finally {
    sweeping = false;
  }
}

/** Give up on a run that keeps crashing: close what it left open and end it with a visible RUN_ERROR. */
async function abandon(run: Run, lastSeq: number): Promise<void> {
  const { db } = await getDatabase();
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
