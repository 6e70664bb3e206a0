import "server-only";
import { getDatabase } from "@/lib/db/client";
import { recordQueueSample } from "@/lib/db/queries/operations";
import { env } from "@/lib/platform/env";
import { singleton } from "@/lib/platform/singleton";
import { reportReachable, reportTaskFailure } from "../../platform/status";
import { refreshQueueGauges } from "../views/scrape";

/**
 * Sample the queue every OPS_SAMPLE_INTERVAL_MS for the operations page's charts (the numbers `/api/metrics`
 * reports, from the same query), keeping OPS_SAMPLE_KEEP_HOURS. Every instance samples; one row per interval lands.
 * Idempotent per process.
 */
export function startQueueSampler(): void {
  // Process-wide: one timer however often the module is bundled.
  singleton("queue-sampler", startSampling);
}

function startSampling(): NodeJS.Timeout {
  const sample = async () => {
    try {
      const { db } = await getDatabase();
      const state = await refreshQueueGauges(db);
      await recordQueueSample({
        db,
        state,
        intervalMs: env.OPS_SAMPLE_INTERVAL_MS,
        keepHours: env.OPS_SAMPLE_KEEP_HOURS,
      });
      reportReachable("queue sampler");
    } catch (error) {
      reportTaskFailure("queue sampler", error, "operations: queue sample not recorded");
    }
  };
  const timer = setInterval(() => void sample(), env.OPS_SAMPLE_INTERVAL_MS);
  timer.unref();
  void sample();
  return timer;
}
