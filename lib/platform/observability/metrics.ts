import "server-only";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { singleton } from "@/lib/platform/singleton";

/**
 * The Prometheus series of this process (prom-client), one registry per process (a `singleton`): instrumentation.ts
 * and the route bundles load this module separately, and both must count into the same series.
 *
 * Two kinds of series. Counters and histograms count what this instance did (runs it finished, decisions it took,
 * deliveries it made) and start at zero with the process, as Prometheus expects; sum them across instances. Gauges
 * about the queue (pending decisions, oldest age, failed effects, threads by status) are read from the database at
 * scrape time by `collectQueueGauges` (set by the metrics route), so every instance reports the same shared state;
 * take `max` of those across instances, not the sum. Every label is from a small fixed set: never a thread, run,
 * order or user id.
 */
function create() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "hitl_process_" });
  const seconds = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
  const waits = [1, 10, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 86_400, 3 * 86_400, 7 * 86_400];
  const registers = [registry];
  return {
    registry,
    ticketsCreated: new Counter({
      name: "hitl_tickets_created_total",
      help: "Tickets filed on this instance, by agent.",
      labelNames: ["agent"] as const,
      registers,
    }),
    decisions: new Counter({
      name: "hitl_decisions_total",
      help: "Decisions taken on this instance, by interrupt action and outcome (the answer's decision, or cancelled).",
      labelNames: ["action", "outcome"] as const,
      registers,
    }),
    decisionLatency: new Histogram({
      name: "hitl_decision_latency_seconds",
      help: "Time from an interrupt being raised to its decision, by interrupt action.",
      labelNames: ["action"] as const,
      buckets: waits,
      registers,
    }),
    runs: new Counter({
      name: "hitl_runs_total",
      help: "Runs finished on this instance, by kind (input, resume, fork, retry) and outcome (succeeded, interrupted, failed, cancelled, timed_out).",
      labelNames: ["kind", "outcome"] as const,
      registers,
    }),
    runDuration: new Histogram({
      name: "hitl_run_duration_seconds",
      help: "Wall time of a run on this instance, from its start (or its recovery) to its end, by kind and outcome.",
      labelNames: ["kind", "outcome"] as const,
      buckets: seconds,
      registers,
    }),
    retentionRuns: new Counter({
      name: "hitl_retention_runs_total",
      help: "Scheduled retention runs this instance made, by outcome (ok, failed).",
      labelNames: ["outcome"] as const,
      registers,
    }),
    retentionRemoved: new Counter({
      name: "hitl_retention_removed_total",
      help: "Rows scheduled retention removed on this instance, by what (checkpoints, writes, blobs, events, threads_archived).",
      labelNames: ["what"] as const,
      registers,
    }),
    retentionLastRun: new Gauge({
      name: "hitl_retention_last_run_timestamp_seconds",
      help: "When the last scheduled retention run (by any instance) finished, Unix seconds; 0 when none has. Read from the database at scrape time.",
      registers,
    }),
    recoveries: new Counter({
      name: "hitl_run_recoveries_total",
      help: "Runs this instance continued from their last checkpoint after their owner stopped (the recovery sweeper).",
      registers,
    }),
    leaseTakeovers: new Counter({
      name: "hitl_lease_takeovers_total",
      help: "Run leases that changed hands: taken here from an expired lease, expired early for a gone local owner, or lost to another instance.",
      labelNames: ["reason"] as const,
      registers,
    }),
    databaseFaults: new Counter({
      name: "hitl_database_faults_total",
      help: "Requests this instance answered 503 because of the database, by code (unavailable:database, unavailable:database_busy) and reason (connection_lost, too_many_connections, statement_timeout…).",
      labelNames: ["code", "reason"] as const,
      registers,
    }),
    databaseOutages: new Counter({
      name: "hitl_database_task_outages_total",
      help: "Times a background task of this instance (heartbeat, sweeper, listener, delivery, deadlines, audit chainer…) lost the database.",
      labelNames: ["task"] as const,
      registers,
    }),
    providerEvents: new Counter({
      name: "hitl_provider_events_total",
      help: "Payment provider webhook events this instance received, by provider and what applying them did (moved, unchanged, finding, unmatched, ignored, duplicate, refused).",
      labelNames: ["provider", "outcome"] as const,
      registers,
    }),
    reconciliationRuns: new Counter({
      name: "hitl_reconciliation_runs_total",
      help: "Reconciliation runs with the payment provider this instance made, by outcome (ok, failed).",
      labelNames: ["outcome"] as const,
      registers,
    }),
    reconciliationFindings: new Counter({
      name: "hitl_reconciliation_findings_total",
      help: "New differences between the payment provider and the ledger found on this instance, by kind.",
      labelNames: ["kind"] as const,
      registers,
    }),
    effectDeliveries: new Counter({
      name: "hitl_effect_deliveries_total",
      help: "Side-effect delivery attempts on this instance, by kind and result (delivered, retry, failed, unconfirmed).",
      labelNames: ["kind", "result"] as const,
      registers,
    }),
    effectDuration: new Histogram({
      name: "hitl_effect_delivery_seconds",
      help: "Time one delivery attempt of a side effect took, by kind.",
      labelNames: ["kind"] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    llmLatency: new Histogram({
      name: "hitl_llm_call_seconds",
      help: "Latency of one chat-model call, by model.",
      labelNames: ["model"] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    }),
    llmTokens: new Counter({
      name: "hitl_llm_tokens_total",
      help: "Tokens used by chat-model calls, by model and type (prompt, completion).",
      labelNames: ["model", "type"] as const,
      registers,
    }),
    llmErrors: new Counter({
      name: "hitl_llm_errors_total",
      help: "Chat-model calls that failed, by model.",
      labelNames: ["model"] as const,
      registers,
    }),
    sseOpen: new Gauge({
      name: "hitl_sse_connections",
      help: "Event streams (SSE) open on this instance.",
      registers,
    }),
    sseTotal: new Counter({
      name: "hitl_sse_connections_total",
      help: "Event streams (SSE) opened on this instance.",
      registers,
    }),
    eventLogLag: new Histogram({
      name: "hitl_event_log_lag_seconds",
      help: "Time from a run emitting an event to the event being durable in the event log (and published).",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    }),
    pendingDecisions: new Gauge({
      name: "hitl_decisions_pending",
      help: "Decisions waiting for a person, by interrupt action (shared state, read from the database).",
      labelNames: ["action"] as const,
      registers,
    }),
    oldestPending: new Gauge({
      name: "hitl_decision_oldest_pending_age_seconds",
      help: "Age of the oldest decision waiting for a person; 0 when none waits (shared state).",
      registers,
    }),
    timersWaiting: new Gauge({
      name: "hitl_timers_waiting",
      help: "Durable timers waiting for their time (wait_timer questions nobody has to answer; not in hitl_decisions_pending) (shared state).",
      registers,
    }),
    threads: new Gauge({
      name: "hitl_threads",
      help: "Threads by status (shared state, read from the database).",
      labelNames: ["status"] as const,
      registers,
    }),
    effectsOpen: new Gauge({
      name: "hitl_effects",
      help: "Side effects not yet delivered or closed, by kind and status (queued, sending, failed) (shared state).",
      labelNames: ["kind", "status"] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof create>;

/** This process's metrics (created on first use). */
export function metrics(): Metrics {
  return singleton("metrics", create);
}

/** A label value from a bounded vocabulary: short lowercase words only, anything else is `other`. */
export function boundedLabel(value: unknown, fallback = "other"): string {
  return typeof value === "string" && /^[a-z][a-z0-9_.-]{0,39}$/.test(value) ? value : fallback;
}
