import { json, route } from "@/lib/http/route";
import { changeTeam, removeTeam, type TeamChange, teamChange } from "@/lib/queue/settings/teams";

export const dynamic = "force-dynamic";

/** Rename a team, set its members or its agents (admins only, audited): 200 `{ team }`. */
export const PATCH = route<{ teamId: string }, TeamChange>(
  {
    name: "PATCH /api/admin/teams/[teamId]",
    access: "admin",
    body: { schema: teamChange, code: "bad_request:team_change", what: "The change" },
  },
  async ({ params, body, principal, database: { db } }) =>
    json({ team: await changeTeam({ db, teamId: params.teamId, change: body, by: principal }) }),
);

/** Delete a team: its agents become visible to everyone again. */
export const DELETE = route<{ teamId: string }>(
  { name: "DELETE /api/admin/teams/[teamId]", access: "admin" },
  async ({ params, principal, database: { db } }) => {
    await removeTeam({ db, teamId: params.teamId, by: principal });
    return json({ deleted: true });
  },
);
