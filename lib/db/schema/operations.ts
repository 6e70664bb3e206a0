import { integer, jsonb, pgTable, timestamp } from "drizzle-orm/pg-core";

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
