import { boolean, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The queue sampled over time for the operations page: one row per sampling interval (instances sampling the same
 * interval write it once). The numbers are those `/api/metrics` reports at that moment. Kept for a bounded window;
 * the sampler deletes older rows itself.
 */
export const queueSamples = pgTable("queue_samples", {
  /** Start of the sampling interval. */
  at: timestamp("at", { withTimezone: true }).primaryKey(),
  /** Decisions waiting for a person. */
  pending: integer("pending").notNull(),
  /** Age of the oldest of them in seconds (0 when none waits). */
  oldestAgeSeconds: integer("oldest_age_seconds").notNull(),
  /** Pending decisions by interrupt action. */
  pendingByAction: jsonb("pending_by_action").$type<Record<string, number>>().notNull(),
  /** Threads whose last run failed or that wait for a supervisor (`failed` + `needs_attention`). */
  failedThreads: integer("failed_threads").notNull(),
  /** Side effects that ran out of attempts and wait for an operator. */
  failedEffects: integer("failed_effects").notNull(),
});

export type QueueSample = typeof queueSamples.$inferSelect;

/**
 * Jobs the server runs by itself on a schedule (retention): one row per job, holding its lease — at most one instance
 * runs a job at a time, whoever's timer fires first after the interval — and what its last run did, for the
 * operations page and the metrics.
 */
export const scheduledJobs = pgTable("scheduled_jobs", {
  name: text("name").primaryKey(),
  /** The instance running it now (null when none is). */
  leaseHolder: text("lease_holder"),
  /** The lease lapses at this instant (renewed while the job works): a crashed holder blocks it no longer. */
  leaseUntil: timestamp("lease_until", { withTimezone: true }),
  lastStartedAt: timestamp("last_started_at", { withTimezone: true }),
  lastFinishedAt: timestamp("last_finished_at", { withTimezone: true }),
  /** Which instance ran it last. */
  lastHolder: text("last_holder"),
  lastOk: boolean("last_ok"),
  /** What the last run did (the job's own report, e.g. rows removed per retention step). */
  lastReport: jsonb("last_report").$type<Record<string, unknown>>(),
  /** Why the last run failed (a code and message; never data). */
  lastError: text("last_error"),
  runs: integer("runs").notNull().default(0),
});

export type ScheduledJob = typeof scheduledJobs.$inferSelect;

/**
 * Reports of the deploy shadow (`npm run deploy:shadow`, scripts/deploy-shadow.ts): what a candidate build would do
 * with the threads waiting for a person, compared with the build serving now. Written by the command (the only row
 * it writes); the admin page shows the last one.
 */
export const deployShadowReports = pgTable("deploy_shadow_reports", {
  id: text("id").primaryKey(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  /** The candidate build, as the command was told (a directory, a tag). */
  candidate: text("candidate").notNull(),
  /** The build it was compared with. */
  baseline: text("baseline").notNull(),
  /** 0: nothing a customer or the money sees would differ; 1: something would. */
  exitCode: integer("exit_code").notNull(),
  /** Threads by verdict. */
  summary: jsonb("summary").$type<Record<string, number>>().notNull(),
  /** One entry per thread: its verdict and what differs. */
  threads: jsonb("threads").$type<unknown[]>().notNull(),
});

export type DeployShadowReport = typeof deployShadowReports.$inferSelect;

/**
 * Events a payment provider sent to its webhook (Stripe's `evt_…`), one row per event id: an event delivered twice
 * (Stripe retries, replays) is applied once. What it did (`outcome`) is kept for the operator; the event's body is not
 * (it is the provider's, and names nothing the ledger needs beyond what the effect row records).
 */
export const providerEvents = pgTable("provider_events", {
  id: text("id").primaryKey(),
  provider: text("provider").notNull(),
  type: text("type").notNull(),
  /** The provider's object the event is about (`re_…`, `dp_…`, `ch_…`). */
  objectId: text("object_id"),
  /** What applying it did: `moved:pending→delivered`, `unchanged`, `finding`, `unmatched`, `ignored`. */
  outcome: text("outcome").notNull(),
  receivedAt: timestamp("received_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Where the provider's truth and the ledger disagree, each an operator task: found by a webhook (a dispute) or by
 * the daily reconciliation (a refund missing on either side, an amount or currency that differs, a refund made outside
 * the console, one that failed after it succeeded). `findingKey` (kind and the provider's or the ledger's id) is
 * unique: a second run, on this instance or another, finds nothing new.
 */
export const providerFindings = pgTable(
  "provider_findings",
  {
    id: text("id").primaryKey(),
    findingKey: text("finding_key").notNull().unique(),
    provider: text("provider").notNull(),
    /** missing_in_ledger | missing_at_provider | amount_differs | outside_console | failed_after_success | dispute */
    kind: text("kind").notNull(),
    /** The provider's id of what it is about (`re_…`, `dp_…`); null when only the ledger has it. */
    providerRef: text("provider_ref"),
    effectId: text("effect_id"),
    threadId: text("thread_id"),
    orderId: text("order_id"),
    /** Both sides as each holds it (amounts, currency, status, ids): what the operator compares. */
    ledger: jsonb("ledger").$type<Record<string, unknown> | null>(),
    providerSide: jsonb("provider_side").$type<Record<string, unknown> | null>(),
    /** The reconciliation run that found it (null: a webhook did). */
    runId: text("run_id"),
    /** open | handled */
    status: text("status").notNull().default("open"),
    resolvedBy: text("resolved_by"),
    resolvedAt: timestamp("resolved_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("provider_findings_open_idx").on(t.status, t.createdAt)],
);

export type ProviderFinding = typeof providerFindings.$inferSelect;

/**
 * The runs of the daily reconciliation with the payment provider: the window it compared (`since` → `until`), how
 * many refunds and disputes it read on each side and what it found. The last runs are the report page.
 */
export const reconciliationRuns = pgTable("reconciliation_runs", {
  id: text("id").primaryKey(),
  provider: text("provider").notNull(),
  instance: text("instance").notNull(),
  since: timestamp("since", { withTimezone: true }).notNull(),
  until: timestamp("until", { withTimezone: true }).notNull(),
  startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
  finishedAt: timestamp("finished_at", { withTimezone: true }),
  /** ok | failed */
  outcome: text("outcome"),
  providerCount: integer("provider_count").notNull().default(0),
  ledgerCount: integer("ledger_count").notNull().default(0),
  /** New findings (a difference an earlier run found is not counted again). */
  found: integer("found").notNull().default(0),
  error: text("error"),
});

export type ReconciliationRun = typeof reconciliationRuns.$inferSelect;
