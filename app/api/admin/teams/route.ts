import { z } from "zod";
import { createTeam, listTeams } from "@/lib/db/queries/teams";
import { json, route } from "@/lib/http/route";
import { listAgents } from "@/lib/runtime/agents/registry";

export const dynamic = "force-dynamic";

const teamBody = z.strictObject({
  name: z.string().trim().min(1, "give the team a name").max(80, "a team's name is at most 80 characters"),
});

/** The teams, with their members and agents, and the agents to assign (admins only). */
export const GET = route({ name: "GET /api/admin/teams", access: "admin" }, async ({ database: { db } }) =>
  json({ teams: await listTeams({ db }), agents: listAgents().map((a) => ({ id: a.id, title: a.title })) }),
);

/** Create a team: 201 `{ team }`; 409 `conflict:team_name` when the name is taken. */
export const POST = route<Record<string, never>, z.infer<typeof teamBody>>(
  {
    name: "POST /api/admin/teams",
    access: "admin",
    body: { schema: teamBody, code: "bad_request:team", what: "The team" },
  },
  async ({ body, principal, database: { db } }) =>
    json({ team: await createTeam({ db, name: body.name, by: principal }) }, { status: 201 }),
);
