import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { decisions } from "./app";

/**
 * Who is handling a pending decision: a soft lock with a TTL, renewed while the claimer's tab is open, released when
 * they decide, leave or let it expire. Advisory (for display): the decision ledger stays the arbiter — a decision
 * by someone else is accepted or refused by the same rules whatever the claim says.
 */
export const decisionClaims = pgTable(
  "decision_claims",
  {
    interruptId: text("interrupt_id")
      .primaryKey()
      .references(() => decisions.interruptId, { onDelete: "cascade" }),
    threadId: text("thread_id").notNull(),
    /** The user handling it, and their email for "being handled by X". */
    userId: text("user_id").notNull(),
    userLabel: text("user_label").notNull(),
    /** A supervisor who assigned it to them (null: they claimed it themselves). */
    assignedBy: text("assigned_by"),
    claimedAt: timestamp("claimed_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("decision_claims_user_idx").on(t.userId, t.expiresAt)],
);

/**
 * Deadlines per interrupt action and amount: a decision recorded with `action` and an amount ≥ `min_amount_cents`
 * is due `due_seconds` after it was raised (the policy with the highest matching minimum wins). `expiry_answer`, when
 * set, is applied by the runtime as a decision of `system:expiry` once the item is overdue.
 */
export const slaPolicies = pgTable(
  "sla_policies",
  {
    id: text("id").primaryKey(),
    /** An interrupt action (`refund_approval`, …) or `*` for any. */
    action: text("action").notNull(),
    minAmountCents: integer("min_amount_cents").notNull().default(0),
    dueSeconds: integer("due_seconds").notNull(),
    expiryAnswer: jsonb("expiry_answer").$type<{ status: "resolved" | "cancelled"; payload?: unknown }>(),
    updatedBy: text("updated_by"),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("sla_policies_action_amount_idx").on(t.action, t.minAmountCents)],
);

/**
 * The inbox change feed: one row per change to a pending decision or its claim (written by triggers, announced with
 * NOTIFY). Live inboxes follow it by id; a reconnecting one asks for the changes after the last id it saw.
 */
export const inboxChanges = pgTable(
  "inbox_changes",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    interruptId: text("interrupt_id").notNull(),
    threadId: text("thread_id").notNull(),
    /** raised | decided | claimed | released | escalated */
    kind: text("kind").notNull(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("inbox_changes_at_idx").on(t.at)],
);

/** Outgoing notifications (webhook, email to a role), configured by an admin. */
export const notificationTargets = pgTable("notification_targets", {
  id: text("id").primaryKey(),
  /** webhook | email */
  kind: text("kind").notNull(),
  /** The webhook URL, or the role whose users get the email. */
  target: text("target").notNull(),
  /** HMAC-SHA256 key for webhooks. */
  secret: text("secret"),
  /** Which events: new_item | overdue | escalated | effect_failed. */
  events: jsonb("events").$type<string[]>().notNull(),
  /** For new_item: only items at least this amount. */
  minAmountCents: integer("min_amount_cents"),
  enabled: boolean("enabled").notNull().default(true),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Queued deliveries of notifications, retried with back-off; keyed so an event notifies each target once. */
export const notifications = pgTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    /** `<event>:<subject id>:<target id>`: an event notifies a target once, whoever records it. */
    idempotencyKey: text("idempotency_key").notNull().unique(),
    targetId: text("target_id").notNull(),
    event: text("event").notNull(),
    payload: jsonb("payload").notNull(),
    /** queued | delivered | failed */
    status: text("status").notNull().default("queued"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    lastError: text("last_error"),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("notifications_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'queued'`)],
);

export type DecisionClaim = typeof decisionClaims.$inferSelect;
export type SlaPolicy = typeof slaPolicies.$inferSelect;
export type InboxChange = typeof inboxChanges.$inferSelect;
export type NotificationTarget = typeof notificationTargets.$inferSelect;
