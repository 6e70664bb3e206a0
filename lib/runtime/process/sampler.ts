import "server-only";
import { getDatabase } from "@/lib/db/client";
import { recordQueueSample } from "@/lib/db/queries/operations";
import { env } from "@/lib/platform/env";
import { errorFields, logger } from "../../platform/observability/logger";
import { refreshQueueGauges } from "../views/scrape";

const KEY = Symbol.for("hitl-console.queue-sampler");
type G = typeof globalThis & { [KEY]?: NodeJS.Timeout };

/**
 * Sample the queue every OPS_SAMPLE_INTERVAL_MS for the operations page's charts (the numbers `/api/metrics`
 * reports, from the same query), keeping OPS_SAMPLE_KEEP_HOURS. Every instance samples; one row per interval lands.
 * Idempotent per process.
 */
export function startQueueSampler(): void {
  const g = globalThis as G;
  if (g[KEY]) return;
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
    } catch (error) {
      logger().warn(errorFields(error), "operations: queue sample not recorded");
    }
  };
  g[KEY] = setInterval(() => void sample(), env.OPS_SAMPLE_INTERVAL_MS);
  g[KEY].unref();
  void sample();
}
