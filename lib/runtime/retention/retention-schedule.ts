import "server-only";
import { errorCodeOf } from "@/lib/contract/errors";
import { getDatabase } from "@/lib/db/client";
import { finishJob, renewJobLease, takeJobLease } from "@/lib/db/queries/scheduled-jobs";
import { env } from "@/lib/platform/env";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { metrics } from "@/lib/platform/observability/metrics";
import { peekSingleton, setSingleton } from "@/lib/platform/singleton";
import { instanceId } from "../../platform/instance";
import { isDraining } from "../../platform/status";
import { applyRetention, type RetentionReport } from "./retention-policy";

/*
 * Retention runs by itself: every instance's timer asks, every RETENTION_SCHEDULE, whether the policy is due; the one
 * that takes the job's lease (a row in `scheduled_jobs`, see lib/db/queries/scheduled-jobs.ts) applies it, renewing
 * the lease while it works, and records what it removed. Two instances never run it at once; a holder that dies
 * leaves a lease that lapses within RETENTION_LEASE_MS. `RETENTION_SCHEDULE=off` leaves it to `npm run prune` and
 * the Admin page.
 */

export const RETENTION_JOB = "retention";
/** Who the audit trail says applied it. */
export const RETENTION_PRINCIPAL = {
  id: "system:retention",
  label: "system:retention",
  role: "admin" as const,
};
/** How long a lease holds without renewal (renewed every third of it while the policy runs). */
const RETENTION_LEASE_MS = 60_000;

/** This process's schedule once started (process-wide: one timer however often the module is bundled). */
const SCHEDULE = "retention-schedule";
interface Schedule {
  timer: NodeJS.Timeout;
  running: boolean;
}

/** Start the schedule (idempotent per process); nothing when RETENTION_SCHEDULE is off. */
export function startRetentionSchedule(): void {
  const everyMs = env.RETENTION_SCHEDULE;
  if (peekSingleton<Schedule>(SCHEDULE)) return;
  if (everyMs === null) {
    logger().info({ job: RETENTION_JOB }, "retention: schedule off (RETENTION_SCHEDULE=off)");
    return;
  }
  // Look often enough to notice the job is due within a tenth of its interval (at most once a minute).
  const tickMs = Math.max(50, Math.min(everyMs / 10, 60_000));
  const state = { timer: setInterval(() => void runRetentionIfDue(everyMs), tickMs), running: false };
  state.timer.unref();
  setSingleton<Schedule>(SCHEDULE, state);
}

/** One look: run the policy if it is due and no instance is running it. What happened, for tests and logs. */
export async function runRetentionIfDue(everyMs: number): Promise<"ran" | "failed" | "not_due" | "busy"> {
  const state = peekSingleton<Schedule>(SCHEDULE);
  if (state?.running || isDraining()) return "busy";
  if (state) state.running = true;
  const holder = instanceId();
  try {
    const { db } = await getDatabase();
    const job = await takeJobLease({ db, name: RETENTION_JOB, holder, everyMs, leaseMs: RETENTION_LEASE_MS });
    if (!job) return "not_due";
    const renew = setInterval(() => {
      void renewJobLease({ db, name: RETENTION_JOB, holder, leaseMs: RETENTION_LEASE_MS })
        .then((held) => {
          if (!held) logger().warn({ job: RETENTION_JOB }, "retention: lease lost while running");
        })
        .catch((error) => logger().warn(errorFields(error), "retention: lease not renewed"));
    }, RETENTION_LEASE_MS / 3);
    renew.unref();
    try {
      const report = await applyRetention({ db, actor: RETENTION_PRINCIPAL, auditUnchanged: false });
      const removed = removedBy(report);
      for (const [what, n] of Object.entries(removed)) metrics().retentionRemoved.inc({ what }, n);
      metrics().retentionRuns.inc({ outcome: "ok" });
      await finishJob({
        db,
        name: RETENTION_JOB,
        holder,
        ok: true,
        report: { removed, steps: report.steps },
        error: null,
      });
      logger().info({ job: RETENTION_JOB, removed }, "retention: scheduled run done");
      return "ran";
    } catch (error) {
      metrics().retentionRuns.inc({ outcome: "failed" });
      const code = errorCodeOf(error) ?? "internal:unexpected";
      await finishJob({ db, name: RETENTION_JOB, holder, ok: false, report: null, error: code }).catch(
        () => {},
      );
      logger().error({ job: RETENTION_JOB, ...errorFields(error) }, "retention: scheduled run failed");
      return "failed";
    } finally {
      clearInterval(renew);
    }
  } catch (error) {
    // The database is away (the lease could not even be asked for): the next tick asks again.
    logger().warn({ job: RETENTION_JOB, ...errorFields(error) }, "retention: not run");
    return "failed";
  } finally {
    if (state) state.running = false;
  }
}

/** Rows removed, summed over the steps. */
export function removedBy(report: RetentionReport): Record<string, number> {
  const sum = (pick: (s: RetentionReport["steps"][number]) => number) =>
    report.steps.reduce((total, s) => total + pick(s), 0);
  return {
    checkpoints: sum((s) => s.checkpointsDeleted),
    writes: sum((s) => s.writesDeleted),
    blobs: sum((s) => s.blobsDeleted),
    events: sum((s) => s.eventsDeleted),
    threads_archived: sum((s) => s.threadsArchived),
  };
}
