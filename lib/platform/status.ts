import "server-only";
import { databaseFault } from "@/lib/platform/database-faults";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { metrics } from "@/lib/platform/observability/metrics";
import { singleton } from "@/lib/platform/singleton";

/**
 * The runtime's state in this process, for /api/health and the route wrapper: whether its background work
 * (recovery, heartbeat, LISTEN) has started, which of it cannot reach the database, and whether the process is
 * draining. A process-wide `singleton`: `instrumentation.ts` (which starts the work) and the routes (which read it) are
 * bundled apart.
 */
export type Phase = "starting" | "running" | "draining";

interface State {
  phase: Phase;
  /** Background tasks that cannot reach the database, by name, since when. */
  failing: Map<string, number>;
  /** What each failing task last met, as `database-faults.ts` names it (`too_many_connections`…), or `error`. */
  faults: Map<string, string>;
}

function state(): State {
  return singleton<State>("runtime-status", () => ({
    phase: "starting",
    failing: new Map(),
    faults: new Map(),
  }));
}

export function runtimePhase(): Phase {
  return state().phase;
}

export function setRuntimePhase(phase: Phase): void {
  state().phase = phase;
}

export function isDraining(): boolean {
  return state().phase === "draining";
}

/** The failing tasks with what each last met: `sweeper (too_many_connections)`. */
export function failingTasksWithFaults(): string[] {
  const { failing, faults } = state();
  return [...failing.keys()].map((task) => (faults.has(task) ? `${task} (${faults.get(task)})` : task));
}

/**
 * A background task could not reach the database. Logged once per outage of that task, not once per attempt (a
 * retry loop would otherwise fill the log): the next line about it says it is back.
 */
export function reportUnreachable(task: string, error: unknown): void {
  const { failing, faults } = state();
  faults.set(task, databaseFault(error)?.reason ?? "error");
  if (failing.has(task)) return;
  failing.set(task, Date.now());
  metrics().databaseOutages.inc({ task });
  const reason = error instanceof Error ? error.message || error.name : String(error);
  logger().error({ task, reason }, `[${task}] database unreachable; retrying with back-off`);
}

/** A background task reached the database: logged only if it could not before. */
export function reportReachable(task: string): void {
  const { failing } = state();
  const since = failing.get(task);
  if (since === undefined) return;
  failing.delete(task);
  state().faults.delete(task);
  logger().info({ task, downSeconds: (Date.now() - since) / 1000 }, `[${task}] database reachable again`);
}

/**
 * A tick of a background task failed. A database fault (unreachable, failing over, out of connections, too slow)
 * marks the task unreachable — one log line per outage, and /api/health names it — instead of an error line every
 * tick; anything else is logged as `message` says. The task's next success calls {@link reportReachable}.
 */
export function reportTaskFailure(task: string, error: unknown, message: string): void {
  if (databaseFault(error)) reportUnreachable(task, error);
  else logger().error({ task, ...errorFields(error) }, message);
}

/** Delays for retrying: doubling from `initialMs` up to `maxMs`, with jitter so replicas do not retry in step. */
export function backoff({ initialMs, maxMs }: { initialMs: number; maxMs: number }) {
  let attempt = 0;
  return {
    next(): number {
      const ms = Math.min(maxMs, initialMs * 2 ** attempt);
      attempt += 1;
      return Math.round(ms * (0.8 + Math.random() * 0.2));
    },
    reset(): void {
      attempt = 0;
    },
  };
}
