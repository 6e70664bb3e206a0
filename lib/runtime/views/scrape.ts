import "server-only";
import { timingSafeEqual } from "node:crypto";
import { requireRole } from "@/lib/auth/principal";
import { AppError } from "@/lib/contract/errors";
import type { AppDb } from "@/lib/db/open";
import { type QueueState, readQueueState } from "@/lib/db/queries/operations";
import { getScheduledJob } from "@/lib/db/queries/scheduled-jobs";
import { env } from "@/lib/platform/env";
import { RETENTION_JOB } from "@/lib/runtime/retention/retention-schedule";
import { boundedLabel, metrics } from "../../platform/observability/metrics";

/**
 * Who may read `/api/metrics`: a scraper with `Authorization: Bearer <METRICS_TOKEN>`, or a signed-in admin. A
 * bearer that is not the metrics token is judged as an API key (intake keys are refused) — never silently ignored.
 */
export async function authorizeMetrics({ db, request }: { db: AppDb; request: Request }): Promise<void> {
  const header = request.headers.get("authorization");
  const token = env.METRICS_TOKEN;
  if (token && header) {
    const presented = header.match(/^Bearer\s+(\S+)$/i)?.[1] ?? "";
    if (sameSecret(presented, token)) return;
    if (!presented.startsWith("hitl_")) {
      throw new AppError("unauthorized:metrics_token", "The metrics token is not valid.");
    }
  }
  await requireRole({ db, request, role: "admin" });
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Set the shared-state gauges from the database (at scrape time) and return the state they were set from. */
export async function refreshQueueGauges(db: AppDb): Promise<QueueState> {
  const state = await readQueueState({ db });
  const m = metrics();
  m.pendingDecisions.reset();
  for (const [action, count] of Object.entries(state.pendingByAction)) {
    m.pendingDecisions.set({ action: boundedLabel(action) }, count);
  }
  m.oldestPending.set(state.oldestAgeSeconds);
  m.timersWaiting.set(state.timersWaiting);
  m.threads.reset();
  for (const [status, count] of Object.entries(state.threadsByStatus)) {
    m.threads.set({ status: boundedLabel(status) }, count);
  }
  m.effectsOpen.reset();
  for (const e of state.openEffects) {
    m.effectsOpen.set({ kind: boundedLabel(e.kind), status: boundedLabel(e.status) }, e.count);
  }
  return state;
}

/** The Prometheus text exposition of every series, gauges refreshed. */
export async function scrape(db: AppDb): Promise<{ body: string; contentType: string }> {
  await refreshQueueGauges(db);
  const retention = await getScheduledJob({ db, name: RETENTION_JOB });
  metrics().retentionLastRun.set(retention?.lastFinishedAt ? retention.lastFinishedAt.getTime() / 1000 : 0);
  const { registry } = metrics();
  return { body: await registry.metrics(), contentType: registry.contentType };
}
