import { json, route } from "@/lib/http/route";
import { type AuthorityChange, authorityChange, readAuthority } from "@/lib/queue/settings/authority";
import { proposeChange } from "@/lib/queue/settings/proposals";

export const dynamic = "force-dynamic";

/** The money limits per person and per team (admins only). */
export const GET = route(
  { name: "GET /api/admin/authority", access: "admin" },
  async ({ database: { db } }) => json(await readAuthority({ db })),
);

/**
 * Propose a limit (`{ subjectKind, subjectId, agentId?, action?, perDecisionCents?, perDayCents? }`, replacing the one
 * of the same subject and scope) or its removal (`{ remove: id }`): 202 `{ proposal }` — it applies when a second admin
 * approves it (`POST /api/admin/proposals/{id}`). 422 `unprocessable:authority_limit` for an unknown user, team or agent,
 * or a limit that caps nothing; 404 `not_found:authority_limit` for a removal of none (nothing written).
 */
export const POST = route<Record<string, never>, AuthorityChange>(
  {
    name: "POST /api/admin/authority",
    access: "admin",
    body: { schema: authorityChange, code: "bad_request:authority", what: "The limit" },
  },
  async ({ body, principal, database: { db } }) =>
    json(
      { proposal: await proposeChange({ db, kind: "authority", change: body, by: principal }) },
      { status: 202 },
    ),
);
