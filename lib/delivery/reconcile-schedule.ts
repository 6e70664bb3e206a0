import "server-only";
import { errorCodeOf } from "@/lib/contract/errors";
import { getDatabase } from "@/lib/db/client";
import {
  finishReconciliationRun,
  lastReconciledUntil,
  startReconciliationRun,
} from "@/lib/db/queries/provider";
import { finishJob, renewJobLease, takeJobLease } from "@/lib/db/queries/scheduled-jobs";
import type { Queryable } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";
import { instanceId } from "@/lib/platform/instance";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { metrics } from "@/lib/platform/observability/metrics";
import { peekSingleton, setSingleton } from "@/lib/platform/singleton";
import { isDraining } from "@/lib/platform/status";
import { stripeClient } from "./connectors/stripe";
import { recordFindings } from "./provider-truth";
import { httpReconcileSource, type ReconcileSource, reconcile, stripeReconcileSource } from "./reconcile";

/*
 * The reconciliation runs by itself, as retention does: every instance's timer asks, every RECONCILE_SCHEDULE, whether
 * it is due; the one that takes the job's lease (`scheduled_jobs`) compares the window since the last successful run
 * (an hour of overlap: a refund created at the edge is read twice and found once) with the provider, renewing its lease
 * while it works. Two instances never run it at once, and a finding is recorded once whoever finds it.
 */

export const RECONCILE_JOB = "reconciliation";
const LEASE_MS = 60_000;
/** How far back the first run looks. */
const FIRST_WINDOW_MS = 7 * 86_400_000;
/** How much of the last run's window the next one reads again. */
const OVERLAP_MS = 3_600_000;

/** Which provider the reconciliation compares with, as configured; null for the simulator (nothing to compare). */
export function reconciledProvider(): "stripe" | "http" | null {
  return env.STRIPE_SECRET_KEY ? "stripe" : env.PAYMENT_URL ? "http" : null;
}

/** The configured provider as a reconciliation source; null for the simulator (nothing to compare with). */
export function reconcileSourceFromEnv(): ReconcileSource | null {
  if (env.STRIPE_SECRET_KEY)
    return stripeReconcileSource(
      stripeClient({
        secretKey: env.STRIPE_SECRET_KEY,
        apiBase: env.STRIPE_API_BASE,
        timeoutMs: env.PAYMENT_TIMEOUT_MS,
      }),
    );
  if (env.PAYMENT_URL)
    return httpReconcileSource({ baseUrl: env.PAYMENT_URL, timeoutMs: env.PAYMENT_TIMEOUT_MS });
  return null;
}

/** What one run did. */
export interface ReconcileRunReport {
  runId: string;
  since: Date;
  until: Date;
  providerCount: number;
  ledgerCount: number;
  settled: number;
  found: number;
}

/** One reconciliation run over the window since the last one (the caller holds the job's lease). */
export async function runReconciliation({
  db,
  source,
  holder,
  now = new Date(),
}: {
  db: Queryable;
  source: ReconcileSource;
  holder: string;
  now?: Date;
}): Promise<ReconcileRunReport> {
  const last = await lastReconciledUntil({ db, provider: source.provider });
  const since = new Date(last ? last.getTime() - OVERLAP_MS : now.getTime() - FIRST_WINDOW_MS);
  const run = await startReconciliationRun({
    db,
    provider: source.provider,
    instance: holder,
    since,
    until: now,
  });
  try {
    const result = await reconcile({ db, source, since, until: now, runId: run.id });
    const found = await recordFindings({ db, findings: result.findings });
    await finishReconciliationRun({
      db,
      id: run.id,
      outcome: "ok",
      providerCount: result.providerCount,
      ledgerCount: result.ledgerCount,
      found,
      error: null,
    });
    metrics().reconciliationRuns.inc({ outcome: "ok" });
    const report = { runId: run.id, since, until: now, ...result, found };
    logger().info(
      {
        job: RECONCILE_JOB,
        provider: source.provider,
        providerCount: result.providerCount,
        ledgerCount: result.ledgerCount,
        settled: result.settled,
        found,
      },
      found > 0
        ? `reconciliation: ${found} new difference(s) with the payment provider; see Operations → Reconciliation`
        : "reconciliation: the ledger agrees with the payment provider",
    );
    return report;
  } catch (error) {
    metrics().reconciliationRuns.inc({ outcome: "failed" });
    const code = errorCodeOf(error) ?? "internal:unexpected";
    const message = error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300);
    await finishReconciliationRun({
      db,
      id: run.id,
      outcome: "failed",
      providerCount: 0,
      ledgerCount: 0,
      found: 0,
      error: `${code}: ${message}`,
    }).catch(() => {});
    throw error;
  }
}

const SCHEDULE = "reconcile-schedule";
interface Schedule {
  timer: NodeJS.Timeout;
  running: boolean;
}

/** Start the schedule (idempotent per process); nothing when RECONCILE_SCHEDULE is off or no provider is set. */
export function startReconcileSchedule(): void {
  const everyMs = env.RECONCILE_SCHEDULE;
  if (peekSingleton<Schedule>(SCHEDULE) || everyMs === null || !reconciledProvider()) return;
  const tickMs = Math.max(50, Math.min(everyMs / 10, 60_000));
  const state = { timer: setInterval(() => void runReconciliationIfDue(everyMs), tickMs), running: false };
  state.timer.unref();
  setSingleton<Schedule>(SCHEDULE, state);
}

/** One look: reconcile if due and no instance is at it. */
export async function runReconciliationIfDue(
  everyMs: number,
  options: { holder?: string; source?: ReconcileSource | null; db?: Queryable } = {},
): Promise<"ran" | "failed" | "not_due" | "busy" | "off"> {
  const source = options.source === undefined ? reconcileSourceFromEnv() : options.source;
  if (!source) return "off";
  const state = options.holder ? undefined : peekSingleton<Schedule>(SCHEDULE);
  if (state?.running || isDraining()) return "busy";
  if (state) state.running = true;
  const holder = options.holder ?? instanceId();
  try {
    const db = options.db ?? (await getDatabase()).db;
    const job = await takeJobLease({ db, name: RECONCILE_JOB, holder, everyMs, leaseMs: LEASE_MS });
    if (!job) return "not_due";
    const renew = setInterval(() => {
      void renewJobLease({ db, name: RECONCILE_JOB, holder, leaseMs: LEASE_MS }).catch(() => {});
    }, LEASE_MS / 3);
    renew.unref();
    try {
      const report = await runReconciliation({ db, source, holder });
      await finishJob({
        db,
        name: RECONCILE_JOB,
        holder,
        ok: true,
        report: {
          runId: report.runId,
          providerCount: report.providerCount,
          ledgerCount: report.ledgerCount,
          settled: report.settled,
          found: report.found,
        },
        error: null,
      });
      return "ran";
    } catch (error) {
      const code = errorCodeOf(error) ?? "internal:unexpected";
      await finishJob({ db, name: RECONCILE_JOB, holder, ok: false, report: null, error: code }).catch(
        () => {},
      );
      logger().error({ job: RECONCILE_JOB, ...errorFields(error) }, "reconciliation: run failed");
      return "failed";
    } finally {
      clearInterval(renew);
    }
  } catch (error) {
    logger().warn({ job: RECONCILE_JOB, ...errorFields(error) }, "reconciliation: not run");
    return "failed";
  } finally {
    if (state) state.running = false;
  }
}
