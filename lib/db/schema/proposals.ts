import { index, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/*
 * Four-eyes on configuration (issue 57): a change to a setting that governs money or who decides is a proposal until
 * a second admin approves it; the proposal keeps what was asked, by whom, and what became of it.
 */
export const configProposals = pgTable(
  "config_proposals",
  {
    id: text("id").primaryKey(),
    /** Which setting: `authority` (money limits). */
    kind: text("kind").notNull(),
    /** The change as validated when it was proposed (validated again when applied). */
    change: jsonb("change").notNull(),
    proposedBy: text("proposed_by").notNull(),
    proposedAt: timestamp("proposed_at", { withTimezone: true }).notNull().defaultNow(),
    /** pending | applied | rejected */
    status: text("status").notNull().default("pending"),
    decidedBy: text("decided_by"),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    /** What applying it gave (the setting after it), or the rejection's note. */
    outcome: jsonb("outcome"),
  },
  (t) => [index("config_proposals_status_idx").on(t.status, t.proposedAt)],
);
export type ConfigProposal = typeof configProposals.$inferSelect;
