import "server-only";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { AlwaysOffSampler, BatchSpanProcessor, NoopSpanProcessor } from "@opentelemetry/sdk-trace";
import { env } from "@/lib/platform/env";
import { peekSingleton, singleton } from "@/lib/platform/singleton";

const SDK = "otel-sdk";

/**
 * Start OpenTelemetry for this process (from instrumentation.ts, once): a tracer provider with async-local context,
 * so spans nest across awaits. With OTEL_EXPORTER_OTLP_ENDPOINT finished spans are batched to `<endpoint>/v1/traces`
 * (OTLP/HTTP JSON); without it spans are not recorded (sampled off) — ids still exist for log lines and run rows. Nothing else
 * from the environment switches on: no metric or log exporters (metrics are Prometheus, at /api/metrics), no
 * auto-instrumentation.
 */
export function startTelemetry(): void {
  singleton(SDK, createTelemetry);
}

function createTelemetry(): NodeSDK {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, "");
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME,
    spanProcessors: endpoint
      ? [
          new BatchSpanProcessor({
            exporter: new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }),
            scheduledDelayMillis: env.OTEL_BSP_SCHEDULE_DELAY,
          }),
        ]
      : [new NoopSpanProcessor()],
    // Without an exporter nothing is recorded: spans still get ids (log lines and run rows carry them) but no
    // attributes, events or timings are kept — the run path pays next to nothing for tracing that goes nowhere.
    ...(endpoint ? {} : { sampler: new AlwaysOffSampler() }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  return sdk;
}

/** Export what is still buffered (on shutdown); never throws and never waits longer than `timeoutMs`. */
export async function flushTelemetry(timeoutMs = 2_000): Promise<void> {
  const sdk = peekSingleton<NodeSDK>(SDK);
  if (!sdk) return;
  await Promise.race([sdk.shutdown().catch(() => {}), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
}
