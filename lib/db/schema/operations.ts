import { boolean, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

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
