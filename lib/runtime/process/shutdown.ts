import "server-only";
import { getDatabase } from "@/lib/db/client";
import { markInstanceStopped } from "@/lib/db/queries/instances";
import { releaseRuns } from "@/lib/db/queries/runs";
import { env } from "@/lib/platform/env";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { flushTelemetry } from "@/lib/platform/observability/otel";
import { singleton } from "@/lib/platform/singleton";
import { instanceId } from "../../platform/instance";
import { setRuntimePhase } from "../../platform/status";
import { activeRuns } from "../runs/executor";
import { stopHeartbeat, stopSweeping } from "../runs/recovery";
import { endOpenStreams } from "../runs/stream";
import { stopEventListener } from "./listener";

/** How long an aborted run may take to stop writing before its lease is released anyway. */
const ABORT_WAIT_MS = 2_000;
/** How long releasing may take (a database that does not answer must not keep the process alive). */
const RELEASE_WAIT_MS = 5_000;
/** How long the framework gets to close the HTTP server after the drain, before the process exits regardless. */
const EXIT_WAIT_MS = 1_500;

/**
 * Take over SIGTERM and SIGINT for this server process: drain, then hand over to the framework's own handler (Next.js
 * closes the HTTP server and exits). Next.js's handler alone would exit as soon as no request is open — in the middle
 * of a run — or never, while an event stream is open. Idempotent per process.
 */
export function installShutdownHandlers(): void {
  // Once per process: a second install would take the first one's handler for the framework's.
  singleton("shutdown-installed", () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) takeOver(signal);
    return true;
  });
}

function takeOver(signal: "SIGTERM" | "SIGINT"): void {
  const framework = process.listeners(signal);
  process.removeAllListeners(signal);
  let received = false;
  process.on(signal, () => {
    // A second signal (a shell's Ctrl-C reaches both the group and the parent) changes nothing: the drain is bounded.
    if (received) return;
    received = true;
    void drain(signal).finally(() => exitVia(signal, framework));
  });
}

function exitVia(signal: NodeJS.Signals, framework: NodeJS.SignalsListener[]): void {
  setTimeout(() => process.exit(signal === "SIGTERM" ? 143 : 130), EXIT_WAIT_MS).unref();
  if (framework.length === 0) process.exit(0);
  for (const handler of framework) handler(signal);
}

/**
 * Stop claiming (run requests answer 503, the sweeper stops), let the runs executing here finish for up to
 * SHUTDOWN_GRACE_MS, then stop the rest and release their leases — no owner, lease expired, announced — so another
 * instance continues them from their last checkpoint at once. Finally end the open event streams (their clients
 * reconnect elsewhere with their last seq) and stop listening.
 */
export async function drain(signal: string): Promise<void> {
  setRuntimePhase("draining");
  stopSweeping();
  const started = Date.now();
  logger().info(
    { signal, runs: activeRuns().size, graceMs: env.SHUTDOWN_GRACE_MS },
    "shutdown: draining, no new runs",
  );
  await settle(() => [...activeRuns().values()].map((r) => r.done), env.SHUTDOWN_GRACE_MS);
  const left = [...activeRuns().entries()];
  if (left.length > 0) {
    logger().info(
      { runs: left.length },
      "shutdown: grace over; stopping runs and handing them to other instances",
    );
    for (const [, run] of left) run.abort.abort();
    await settle(() => left.filter(([id]) => activeRuns().has(id)).map(([, r]) => r.done), ABORT_WAIT_MS);
  }
  try {
    await within(RELEASE_WAIT_MS, async () => {
      const { db } = await getDatabase();
      // Also runs claimed here that had not started executing: whatever this instance still owns.
      const released = await releaseRuns({ db, owner: instanceId() });
      if (released.length > 0) logger().info({ runIds: released }, "shutdown: released runs");
      await markInstanceStopped({ db, id: instanceId() });
    });
  } catch (error) {
    // The database is unreachable: the runs' leases expire by themselves and another instance takes them then.
    logger().error(errorFields(error), "shutdown: could not release runs");
  }
  stopHeartbeat();
  const streams = endOpenStreams();
  await stopEventListener();
  logger().info({ ms: Date.now() - started, streams }, "shutdown: drained; exiting");
  await flushTelemetry();
}

/**
 * Wait until `current()` (re-read each time: runs may still be added, and finished ones leave) is empty or `ms` passed.
 */
async function settle(current: () => Promise<unknown>[], ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (let pending = current(); pending.length > 0 && Date.now() < deadline; pending = current()) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(pending),
      new Promise((resolve) => {
        timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      }),
    ]);
    clearTimeout(timer);
  }
}

function within<T>(ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([work(), timeout]).finally(() => clearTimeout(timer));
}
