import "server-only";
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { singleton } from "@/lib/platform/singleton";

/**
 * One trace per run. Its root span (`run`) starts where the run is claimed — the claim is its first child — and ends
 * when the run is finalized in the background; graph nodes, model calls, saver calls and the later delivery of the
 * run's side effects are its descendants. The trace id and the root's span id are stored on the run row, so a run
 * continued by another instance after a crash, and a delivery made minutes later by the dispatcher, join the same
 * trace. Spans are always made (log lines carry their ids) and exported only when OTLP is configured (`otel.ts`).
 */
const TRACER = "hitl-console";

export function tracer() {
  return trace.getTracer(TRACER);
}

/** The run root span of the active context (set by {@link withRunSpan}); undefined outside a run. */
const RUN_SPAN = createContextKey("hitl-console.run-span");

/** Trace ids to store on a run row: those of the run span in the active context (null outside one). */
export function activeRunTrace(): { traceId: string | null; traceSpanId: string | null } {
  const span = context.active().getValue(RUN_SPAN) as Span | undefined;
  return span ? runTraceOf(span) : { traceId: null, traceSpanId: null };
}

/** Trace ids of a run span, to store on its row. */
export function runTraceOf(span: Span): { traceId: string | null; traceSpanId: string | null } {
  const ids = span.spanContext();
  return isSpanContextValid(ids)
    ? { traceId: ids.traceId, traceSpanId: ids.spanId }
    : { traceId: null, traceSpanId: null };
}

/** A new root span for a run (never a child of the request that claims it: the run outlives the request). */
export function startRunSpan(name: string, attributes: Attributes, parent?: Context): Span {
  return tracer().startSpan(name, { root: !parent, attributes }, parent ?? ROOT_CONTEXT);
}

/** Run `work` with `span` as the active run span (and active span). */
export function withRunSpan<T>(span: Span, work: () => T): T {
  return context.with(trace.setSpan(ROOT_CONTEXT, span).setValue(RUN_SPAN, span), work);
}

/** A parent context in a trace started elsewhere (a run row's ids): spans made under it join that trace. */
export function remoteParent(
  traceId: string | null | undefined,
  spanId: string | null | undefined,
): Context | undefined {
  if (!traceId || !spanId) return undefined;
  const spanContext = { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true };
  return isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : undefined;
}

/**
 * Run `work` in a child span of the active span (or of `parent`), ending it when `work` settles and marking it an
 * error when `work` throws. Outside any trace (no active span, no parent) `work` runs bare: a page reading the
 * saver must not start traces of its own.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
  parent?: Context,
): Promise<T> {
  const base = parent ?? context.active();
  if (!trace.getSpan(base)) return work(undefined);
  return tracer().startActiveSpan(name, { attributes }, base, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Mark a span failed with the error's code (never its payload). */
export function failSpan(span: Span, error: unknown): void {
  const code = (error as { code?: unknown })?.code;
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: typeof code === "string" ? code : error instanceof Error ? error.name : "error",
  });
}

/** The trace id of a span, or null for a non-recording placeholder. */
export function traceIdOf(span: Span | undefined): string | null {
  const ids = span?.spanContext();
  return ids && isSpanContextValid(ids) ? ids.traceId : null;
}

/** Run spans started at claim time, waiting for the executor to pick them up (one process, keyed by run id). */
function pending(): Map<string, Span> {
  return singleton("run-spans", () => new Map<string, Span>());
}

/** Hand a claimed run's root span to the executor. */
export function parkRunSpan(runId: string, span: Span): void {
  pending().set(runId, span);
}

/** The root span parked for a run at its claim (taken: the executor ends it), if this process claimed it. */
export function takeRunSpan(runId: string): Span | undefined {
  const map = pending();
  const span = map.get(runId);
  map.delete(runId);
  return span;
}
