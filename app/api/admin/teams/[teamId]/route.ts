import { z } from "zod";
import { deleteTeam, updateTeam } from "@/lib/db/queries/teams";
import { json, route } from "@/lib/http/route";
import { listAgents } from "@/lib/runtime/agents/registry";

export const dynamic = "force-dynamic";

const id = z.string().min(1).max(200);
const change = z
  .strictObject({
    name: z
      .string()
      .trim()
      .min(1, "give the team a name")
      .max(80, "a team's name is at most 80 characters")
      .optional(),
    /** The whole list of members (user ids). */
    members: z.array(id).max(1000).optional(),
    /** The whole list of agents the team owns. */
    agents: z.array(id).max(100).optional(),
  })
  .refine((c) => c.name !== undefined || c.members !== undefined || c.agents !== undefined, {
    message: "set name, members and/or agents",
  });

/** Rename a team, set its members or its agents (admins only, audited): 200 `{ team }`. */
export const PATCH = route<{ teamId: string }, z.infer<typeof change>>(
  {
    name: "PATCH /api/admin/teams/[teamId]",
    access: "admin",
    body: { schema: change, code: "bad_request:team_change", what: "The change" },
  },
  async ({ params, body, principal, database: { db } }) =>
    json({
      team: await updateTeam({
        db,
        teamId: params.teamId,
        ...body,
        knownAgents: listAgents().map((a) => a.id),
        by: principal,
      }),
    }),
);

/** Delete a team: its agents become visible to everyone again. */
export const DELETE = route<{ teamId: string }>(
  { name: "DELETE /api/admin/teams/[teamId]", access: "admin" },
  async ({ params, principal, database: { db } }) => {
    await deleteTeam({ db, teamId: params.teamId, by: principal });
    return json({ deleted: true });
  },
);
