import "server-only";
import { randomUUID } from "node:crypto";
import { asc, eq, inArray } from "drizzle-orm";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { TeamView } from "@/lib/contract/views/settings";
import type { AppDb } from "../open";
import { authUsers, teamAgents, teamMembers, teams } from "../schema";
import { recordAudit } from "./audit";

/** The team's shape is the browser's (lib/contract/views/settings.ts). */
export type { TeamView };

/** Every team, by name, with its members and agents. */
export async function listTeams({ db }: { db: AppDb }): Promise<TeamView[]> {
  const [rows, members, agents] = await Promise.all([
    db.select().from(teams).orderBy(asc(teams.name)),
    db
      .select({
        teamId: teamMembers.teamId,
        userId: authUsers.id,
        email: authUsers.email,
        role: authUsers.role,
      })
      .from(teamMembers)
      .innerJoin(authUsers, eq(authUsers.id, teamMembers.userId))
      .orderBy(asc(authUsers.email)),
    db.select().from(teamAgents).orderBy(asc(teamAgents.agentId)),
  ]);
  return rows.map((t) => ({
    id: t.id,
    name: t.name,
    members: members.filter((m) => m.teamId === t.id).map(({ teamId: _t, ...m }) => m),
    agents: agents.filter((a) => a.teamId === t.id).map((a) => a.agentId),
  }));
}

function uniqueName(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } })?.cause ?? error;
  return (cause as { code?: string })?.code === "23505";
}

/** Create a team (audited). 409 `conflict:team_name` when the name is taken. */
export async function createTeam({ db, name, by }: { db: AppDb; name: string; by: Principal }) {
  try {
    return await db.transaction(async (tx) => {
      const [team] = await tx.insert(teams).values({ id: randomUUID(), name, createdBy: by.id }).returning();
      if (!team) throw new Error("createTeam: no row");
      await recordAudit({
        db: tx,
        entries: [{ action: "team_changed", actor: by, detail: { teamId: team.id, created: name } }],
      });
      return { id: team.id, name: team.name, members: [], agents: [] } satisfies TeamView;
    });
  } catch (error) {
    if (uniqueName(error)) throw new AppError("conflict:team_name", `A team named “${name}” already exists.`);
    throw error;
  }
}

/**
 * Change a team (audited, in one transaction): its name, its members (the whole list: user ids) and its agents (the
 * whole list: an agent another team owned moves to this one). Unknown users or agents are refused with 422 and
 * nothing changes.
 */
export async function updateTeam({
  db,
  teamId,
  name,
  members,
  agents,
  knownAgents,
  by,
}: {
  db: AppDb;
  teamId: string;
  name?: string;
  members?: string[];
  agents?: string[];
  /** The registered agents' ids: an assignment names one of them. */
  knownAgents: readonly string[];
  by: Principal;
}): Promise<TeamView> {
  const unknownAgents = (agents ?? []).filter((a) => !knownAgents.includes(a));
  if (unknownAgents.length > 0) {
    throw new AppError("unprocessable:team_agents", `No agent is called ${unknownAgents.join(", ")}.`, {
      fields: ["agents"],
    });
  }
  try {
    await db.transaction(async (tx) => {
      const [team] = await tx.select().from(teams).where(eq(teams.id, teamId)).for("update");
      if (!team) throw new AppError("not_found:team", `Team ${teamId} does not exist.`);
      if (name !== undefined && name !== team.name)
        await tx.update(teams).set({ name }).where(eq(teams.id, teamId));
      if (members !== undefined) {
        const wanted = [...new Set(members)];
        const known = wanted.length
          ? await tx.select({ id: authUsers.id }).from(authUsers).where(inArray(authUsers.id, wanted))
          : [];
        const missing = wanted.filter((id) => !known.some((k) => k.id === id));
        if (missing.length > 0) {
          throw new AppError("unprocessable:team_members", `No user has the id ${missing.join(", ")}.`, {
            fields: ["members"],
          });
        }
        await tx.delete(teamMembers).where(eq(teamMembers.teamId, teamId));
        if (wanted.length) await tx.insert(teamMembers).values(wanted.map((userId) => ({ teamId, userId })));
      }
      if (agents !== undefined) {
        const wanted = [...new Set(agents)];
        await tx.delete(teamAgents).where(eq(teamAgents.teamId, teamId));
        if (wanted.length) {
          await tx
            .insert(teamAgents)
            .values(wanted.map((agentId) => ({ agentId, teamId })))
            .onConflictDoUpdate({ target: teamAgents.agentId, set: { teamId } });
        }
      }
      await recordAudit({
        db: tx,
        entries: [
          {
            action: "team_changed",
            actor: by,
            detail: {
              teamId,
              ...(name !== undefined ? { name } : {}),
              ...(members !== undefined ? { members } : {}),
              ...(agents !== undefined ? { agents } : {}),
            },
          },
        ],
      });
    });
  } catch (error) {
    if (uniqueName(error)) throw new AppError("conflict:team_name", `A team named “${name}” already exists.`);
    throw error;
  }
  const view = (await listTeams({ db })).find((t) => t.id === teamId);
  if (!view) throw new AppError("not_found:team", `Team ${teamId} does not exist.`);
  return view;
}

/** Delete a team (audited): its agents are no team's any more, visible to everyone. */
export async function deleteTeam({ db, teamId, by }: { db: AppDb; teamId: string; by: Principal }) {
  await db.transaction(async (tx) => {
    const [gone] = await tx.delete(teams).where(eq(teams.id, teamId)).returning();
    if (!gone) throw new AppError("not_found:team", `Team ${teamId} does not exist.`);
    await recordAudit({
      db: tx,
      entries: [{ action: "team_changed", actor: by, detail: { teamId, deleted: gone.name } }],
    });
  });
}
