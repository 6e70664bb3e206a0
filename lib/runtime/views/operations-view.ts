import "server-only";
import type { OperationsView } from "@/lib/contract/views/operations";
import type { AppDb } from "@/lib/db/open";
import {
  countDecisionsPerHour,
  listFailedEffects,
  listFailedRuns,
  listQueueSamples,
} from "@/lib/db/queries/operations";
import { countOpenFindings, listReconciliationRuns } from "@/lib/db/queries/provider";
import { getScheduledJob } from "@/lib/db/queries/scheduled-jobs";
import { reconciledProvider } from "@/lib/delivery/reconcile-schedule";
import { env } from "@/lib/platform/env";
import { RETENTION_JOB } from "@/lib/runtime/retention/retention-schedule";
import { refreshQueueGauges } from "./scrape";

/** Hours the operations page looks back. */
export const OPERATIONS_HOURS = 24;

/** The view's shape is the browser's (lib/contract/views/operations.ts). */
export type { OperationsView };

/** The dashboard; `hiddenAgents` (teams) leaves other teams' failed runs and effects out (the counts stay whole). */
export async function loadOperationsView(
  db: AppDb,
  hiddenAgents: readonly string[] = [],
): Promise<OperationsView> {
  const [state, samples, perHour, failedRuns, failedEffects, retention, [lastRun], openFindings] =
    await Promise.all([
      refreshQueueGauges(db),
      listQueueSamples({ db, hours: OPERATIONS_HOURS }),
      countDecisionsPerHour({ db, hours: OPERATIONS_HOURS }),
      listFailedRuns({ db, limit: 20, hiddenAgents }),
      listFailedEffects({ db, limit: 20, hiddenAgents }),
      getScheduledJob({ db, name: RETENTION_JOB }),
      listReconciliationRuns({ db, limit: 1 }),
      countOpenFindings({ db }),
    ]);
  const now = Date.now();
  const provider = reconciledProvider();
  // Every hour of the window, so an hour without decisions shows as 0 rather than being skipped.
  const firstHour = Math.floor(now / 3_600_000) * 3600 - (OPERATIONS_HOURS - 1) * 3600;
  const hours = Array.from({ length: OPERATIONS_HOURS }, (_, i) => firstHour + i * 3600);
  const outcomes: Record<string, number[]> = {};
  for (const row of perHour) {
    const index = hours.indexOf(Math.floor(row.hour.getTime() / 1000));
    if (index < 0) continue;
    outcomes[row.outcome] ??= hours.map(() => 0);
    (outcomes[row.outcome] as number[])[index] = row.count;
  }
  return {
    now,
    current: {
      pending: state.pending,
      pendingByAction: state.pendingByAction,
      oldestAgeSeconds: state.oldestAgeSeconds,
      timersWaiting: state.timersWaiting,
      failedThreads: state.failedThreads,
      stoppedThreads: state.threadsByStatus.stopped ?? 0,
      failedEffects: state.failedEffects,
    },
    samples: samples.map((s) => ({
      at: Math.floor(s.at.getTime() / 1000),
      pending: s.pending,
      oldestAgeSeconds: s.oldestAgeSeconds,
      failedThreads: s.failedThreads,
      failedEffects: s.failedEffects,
    })),
    decisions: { hours, outcomes },
    failedRuns: failedRuns.map((r) => ({
      runId: r.runId,
      threadId: r.threadId,
      kind: r.kind,
      errorCode: r.errorCode,
      finishedAt: r.finishedAt?.toISOString() ?? null,
    })),
    failedEffects: failedEffects.map((e) => ({
      effectId: e.effectId,
      threadId: e.threadId,
      kind: e.kind,
      attempts: e.attempts,
      updatedAt: e.updatedAt.toISOString(),
    })),
    reconciliation: {
      provider,
      everyMs: provider ? env.RECONCILE_SCHEDULE : null,
      lastFinishedAt: lastRun?.finishedAt?.toISOString() ?? null,
      lastOutcome: lastRun?.outcome ?? null,
      lastFound: lastRun?.found ?? null,
      openFindings,
    },
    retention: {
      everyMs: env.RETENTION_SCHEDULE,
      running: !!retention?.leaseHolder && !!retention.leaseUntil && retention.leaseUntil.getTime() > now,
      lastStartedAt: retention?.lastStartedAt?.toISOString() ?? null,
      lastFinishedAt: retention?.lastFinishedAt?.toISOString() ?? null,
      lastOk: retention?.lastOk ?? null,
      lastError: retention?.lastError ?? null,
      removed: (retention?.lastReport?.removed as Record<string, number> | undefined) ?? null,
      runs: retention?.runs ?? 0,
    },
  };
}
