import type { z } from "zod";
import { json, route } from "@/lib/http/route";
import { addTeam, newTeam, readTeams } from "@/lib/queue/settings/teams";

export const dynamic = "force-dynamic";

/** The teams, with their members and agents, and the agents to assign (admins only). */
export const GET = route({ name: "GET /api/admin/teams", access: "admin" }, async ({ database: { db } }) =>
  json(await readTeams({ db })),
);

/** Create a team: 201 `{ team }`; 409 `conflict:team_name` when the name is taken. */
export const POST = route<Record<string, never>, z.infer<typeof newTeam>>(
  {
    name: "POST /api/admin/teams",
    access: "admin",
    body: { schema: newTeam, code: "bad_request:team", what: "The team" },
  },
  async ({ body, principal, database: { db } }) =>
    json({ team: await addTeam({ db, name: body.name, by: principal }) }, { status: 201 }),
);
