import "server-only";
import { z } from "zod";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import { createTeam, deleteTeam, listTeams, type TeamView, updateTeam } from "@/lib/db/queries/teams";
import { listAgents } from "@/lib/runtime/agents/registry";

/*
 * Teams (admin settings): a team owns agents, and its members see their threads in the queue (lib/auth/teams.ts says
 * who sees what). Every change is audited in the transaction that makes it.
 */

const teamName = z
  .string()
  .trim()
  .min(1, "give the team a name")
  .max(80, "a team's name is at most 80 characters");
const id = z.string().min(1).max(200);

/** A new team (`POST /api/admin/teams`). */
export const newTeam = z.strictObject({ name: teamName });

/** A change to a team (`PATCH /api/admin/teams/{teamId}`): any of its name, its members, its agents. */
export const teamChange = z
  .strictObject({
    name: teamName.optional(),
    /** The whole list of members (user ids). */
    members: z.array(id).max(1000).optional(),
    /** The whole list of agents the team owns. */
    agents: z.array(id).max(100).optional(),
  })
  .refine((c) => c.name !== undefined || c.members !== undefined || c.agents !== undefined, {
    message: "set name, members and/or agents",
  });
export type TeamChange = z.infer<typeof teamChange>;

/** The teams, with their members and agents, and the agents there are to assign. */
export async function readTeams({
  db,
}: {
  db: AppDb;
}): Promise<{ teams: TeamView[]; agents: { id: string; title: string }[] }> {
  return { teams: await listTeams({ db }), agents: listAgents().map((a) => ({ id: a.id, title: a.title })) };
}

/** Create a team: 409 `conflict:team_name` when the name is taken. */
export function addTeam({ db, name, by }: { db: AppDb; name: string; by: Principal }): Promise<TeamView> {
  return createTeam({ db, name, by });
}

/**
 * Rename a team, set its members or its agents (an agent another team owned moves to this one); unknown users or
 * agents (this app's registered agents) are refused with 422 and nothing changes.
 */
export function changeTeam({
  db,
  teamId,
  change,
  by,
}: {
  db: AppDb;
  teamId: string;
  change: TeamChange;
  by: Principal;
}): Promise<TeamView> {
  return updateTeam({ db, teamId, ...change, knownAgents: listAgents().map((a) => a.id), by });
}

/** Delete a team: its agents are no team's any more, visible to everyone. */
export function removeTeam({ db, teamId, by }: { db: AppDb; teamId: string; by: Principal }): Promise<void> {
  return deleteTeam({ db, teamId, by });
}
