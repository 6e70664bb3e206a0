import "server-only";
import type { Span } from "@opentelemetry/api";
import type { Decision, Run } from "@/lib/db/schema";
import { singleton } from "@/lib/platform/singleton";
import { errorFields, logger, runFields } from "../../platform/observability/logger";
import { boundedLabel, metrics } from "../../platform/observability/metrics";
import {
  failSpan,
  inSpan,
  parkRunSpan,
  startRunSpan,
  withRunSpan,
} from "../../platform/observability/tracing";
import { isHandedOver } from "./ownership";

/**
 * What the runtime reports about claims and runs, in one place so the runtime's hot paths each get one call: the run
 * span (started at the claim, handed to the executor), decision and run metrics, and the run's log lines.
 */

/** An answer as the claim saw it: enough to count the decision and time it. */
interface Answered {
  interruptId: string;
  status: "resolved" | "cancelled";
  payload?: unknown;
}

/**
 * One claim (a run start, a resume, a decision taken card by card): it opens the run's root span with the claim as
 * its first child; the decisions it settles are counted once it commits, never for a claim that rolled back.
 */
export class ClaimObserver {
  private readonly span: Span;
  private decided: { decision: Decision; entry: Answered }[] = [];

  constructor(threadId: string, runId: string | undefined) {
    this.span = startRunSpan("run", { "thread.id": threadId, ...(runId ? { "run.id": runId } : {}) });
  }

  /** Run the claim transaction inside the run's trace (the run row stores its ids: `activeRunTrace`). */
  run<T>(work: () => Promise<T>): Promise<T> {
    return withRunSpan(this.span, () => inSpan("claim", {}, () => work()));
  }

  /** The claim settled these decisions (counted at commit). */
  settled(known: Map<string, Decision>, entries: readonly Answered[]): void {
    for (const entry of entries) {
      const decision = known.get(entry.interruptId);
      if (decision) this.decided.push({ decision, entry });
    }
  }

  /** The claim committed: count its decisions; hand the span to the executor if it started a run here. */
  committed(result: unknown): void {
    const m = metrics();
    const now = Date.now();
    for (const { decision, entry } of this.decided) {
      const action = boundedLabel(decision.action);
      m.decisions.inc({ action, outcome: decisionOutcome(action, entry) });
      m.decisionLatency.observe({ action }, Math.max(0, (now - decision.createdAt.getTime()) / 1000));
    }
    const run = (result as { run?: Run } | undefined)?.run;
    if (run) {
      this.span.setAttributes({ "run.id": run.id, "run.kind": run.kind });
      logger().info({ ...runFields(run), kind: run.kind, decisions: this.decided.length }, "run claimed");
      // A run left queued for an instance with its agent version is not executed here: its trace ends with the claim.
      if (run.status === "running") {
        parkRunSpan(run.id, this.span);
        return;
      }
    } else {
      this.span.updateName("decision");
    }
    this.span.end();
  }

  /** The claim stepped back to check the thread's version first (it wrote nothing); the claim after it has its own trace. */
  steppedBack(): void {
    this.span.updateName("claim deferred (version check first)");
    this.span.end();
  }

  /** The claim was refused or failed: nothing was written, the trace says why. */
  failed(error: unknown): void {
    failSpan(this.span, error);
    this.span.end();
  }
}

/** The outcome label of an answer: the answer's `decision` or `choice` word, `cancelled`, or `answered`. */
function decisionOutcome(action: string, entry: Answered): string {
  if (entry.status === "cancelled") return "cancelled";
  // An action outside the contract may carry any answer: its words are not a bounded vocabulary.
  if (action === "unknown" || action === "other") return "answered";
  const answer = entry.payload as { decision?: unknown; choice?: unknown } | null | undefined;
  return boundedLabel(answer?.decision ?? answer?.choice, "answered");
}

/** When each run executing here started (process-wide: its start and its end may be observed from two bundles). */
function clock(): Map<string, number> {
  return singleton("run-clock", () => new Map<string, number>());
}

/** A run starts executing here (claimed, forked or recovered). */
export function observeRunStart(run: Run, recovered: boolean): void {
  clock().set(run.id, performance.now());
  if (recovered) metrics().recoveries.inc();
  logger().info({ ...runFields(run), kind: run.kind, attempt: run.attempts, recovered }, "run started");
}

/** A run ended here with this outcome (its row and events are committed). */
export function observeRunEnd(
  run: Run,
  outcome: "succeeded" | "interrupted" | "failed" | "cancelled" | "timed_out",
  code?: string,
): void {
  const started = clock().get(run.id);
  clock().delete(run.id);
  const labels = { kind: boundedLabel(run.kind), outcome };
  const m = metrics();
  m.runs.inc(labels);
  if (started !== undefined) m.runDuration.observe(labels, (performance.now() - started) / 1000);
  const fields = { ...runFields(run), kind: run.kind, outcome, ...(code ? { code } : {}) };
  if (outcome === "failed") logger().warn(fields, "run failed");
  else logger().info(fields, "run finished");
}

/** A run stopped executing here without an ending of its own (taken over, or it could not be finalized). */
export function observeRunStopped(run: Run, lost: boolean, error?: unknown): void {
  clock().delete(run.id);
  if (isHandedOver(error)) {
    metrics().leaseTakeovers.inc({ reason: "database_fault" });
    logger().warn(
      { ...runFields(run), ...errorFields(error) },
      "run stopped here: the database went away mid-step; recovery continues it from its last checkpoint",
    );
  } else if (lost) {
    metrics().leaseTakeovers.inc({ reason: "lost" });
    logger().warn(runFields(run), "run taken over by another instance; stopped here");
  } else {
    logger().error({ ...runFields(run), ...errorFields(error) }, "run could not be finalized");
  }
}
