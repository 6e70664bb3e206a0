import "server-only";
import type { Run } from "@/lib/db/schema";
import { env } from "@/lib/platform/env";
import { cancelReason, RUN_TIMED_OUT } from "./cancel-reason";

/**
 * A run asked to stop before it got here (its owner died after the request, or it was still queued) is stopped at
 * once; past its wall-clock limit the graph is aborted and the run ends timed out. Returns the limit's timer.
 */
export function armLimits(run: Run, abort: AbortController): NodeJS.Timeout | undefined {
  if (run.cancelRequestedBy && !abort.signal.aborted) abort.abort(cancelReason(run.cancelRequestedBy));
  const limit =
    env.RUN_MAX_MS > 0
      ? setTimeout(() => {
          if (!abort.signal.aborted) abort.abort({ code: RUN_TIMED_OUT, limitMs: env.RUN_MAX_MS });
        }, env.RUN_MAX_MS)
      : undefined;
  limit?.unref();
  return limit;
}
