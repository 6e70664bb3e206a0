import { sql } from "drizzle-orm";
import { index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { authUsers } from "./auth";

/*
 * Teams (issue 33): a support desk's groups. A team owns agents; its members see and decide those agents' threads,
 * and nobody outside it does (admins see every thread). An agent no team owns stays visible to everyone.
 */

export const teams = pgTable("teams", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  createdBy: text("created_by").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Who is in a team (a user may be in several). */
export const teamMembers = pgTable(
  "team_members",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => authUsers.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.userId] }), index("team_members_user_idx").on(t.userId)],
);

/** Which team owns an agent (`AgentDefinition.id`): at most one; none means every user sees its threads. */
export const teamAgents = pgTable("team_agents", {
  agentId: text("agent_id").primaryKey(),
  teamId: text("team_id")
    .notNull()
    .references(() => teams.id, { onDelete: "cascade" }),
});

/**
 * Delegated authority (issue 57): how much money a person, or a team, may let leave by their decisions — per decision,
 * per day in total (a team's: all its members' decisions together), per customer over 30 days — for every agent and
 * question kind, or for one
 * agent and/or one kind. Every limit that matches a decision applies. Amounts are in the shop's currency's cents.
 * No row: the role and the agent's policy decide, as before.
 */
export const authorityLimits = pgTable(
  "authority_limits",
  {
    id: text("id").primaryKey(),
    /** `user` | `team` */
    subjectKind: text("subject_kind").notNull(),
    subjectId: text("subject_id").notNull(),
    /** The agent it is limited to (null: every agent). */
    agentId: text("agent_id"),
    /** The question kind it is limited to (null: every kind). */
    action: text("action"),
    perDecisionCents: integer("per_decision_cents"),
    perDayCents: integer("per_day_cents"),
    /** Per customer (the thread's data subject) over the last 30 days, in total. */
    perCustomer30dCents: integer("per_customer_30d_cents"),
    setBy: text("set_by").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("authority_limits_scope_idx").on(
      t.subjectKind,
      t.subjectId,
      sql`coalesce(${t.agentId}, '')`,
      sql`coalesce(${t.action}, '')`,
    ),
  ],
);
export type AuthorityLimit = typeof authorityLimits.$inferSelect;
