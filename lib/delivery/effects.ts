import "server-only";
import { ROOT_CONTEXT } from "@opentelemetry/api";
import type { Effect } from "@/lib/db/schema";
import { logger } from "../platform/observability/logger";
import { boundedLabel, metrics } from "../platform/observability/metrics";
import { failSpan, remoteParent, tracer } from "../platform/observability/tracing";

/**
 * One delivery attempt of a side effect, as a span in the trace of the run that recorded the effect (the trace ids
 * stored on the effect when it was recorded; a new trace when it has none), timed for `hitl_effect_delivery_seconds`. Off the run
 * path: the dispatcher delivers after the run committed the intent.
 */
export async function traceDelivery(effect: Effect, work: () => Promise<void>): Promise<void> {
  const parent = remoteParent(effect.traceId, effect.traceSpanId) ?? ROOT_CONTEXT;
  const kind = boundedLabel(effect.kind);
  const started = performance.now();
  await tracer().startActiveSpan(
    `effect ${kind}`,
    {
      attributes: {
        "effect.id": effect.id,
        "effect.kind": kind,
        "effect.attempt": effect.attempts,
        "thread.id": effect.threadId,
      },
    },
    parent,
    async (span) => {
      try {
        await work();
      } catch (error) {
        failSpan(span, error);
        throw error;
      } finally {
        metrics().effectDuration.observe({ kind }, (performance.now() - started) / 1000);
        span.end();
      }
    },
  );
}

/** Count an attempt's result and log it (the provider's error at warn; a give-up at error). */
export function observeDelivery(
  effect: Effect,
  result: "delivered" | "pending" | "retry" | "failed" | "unconfirmed",
  error?: string,
): void {
  const kind = boundedLabel(effect.kind);
  metrics().effectDeliveries.inc({ kind, result });
  const fields = { threadId: effect.threadId, effectId: effect.id, kind, attempt: effect.attempts };
  if (result === "delivered") logger().info(fields, "effect delivered");
  else if (result === "pending")
    logger().info(fields, "effect taken by the provider, pending its settlement");
  else if (result === "retry") logger().warn({ ...fields, error }, "effect attempt failed; will retry");
  else if (result === "unconfirmed") {
    logger().warn(
      { ...fields, error },
      "effect handed over before a restart, outcome unknown; an operator must confirm",
    );
  } else logger().error({ ...fields, error }, "effect failed after its last attempt; an operator must act");
}
