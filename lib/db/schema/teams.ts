import { index, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
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
