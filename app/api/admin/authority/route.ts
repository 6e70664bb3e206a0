import { json, route } from "@/lib/http/route";
import {
  type AuthorityChange,
  authorityChange,
  changeAuthority,
  readAuthority,
} from "@/lib/queue/settings/authority";

export const dynamic = "force-dynamic";

/** The money limits per person and per team (admins only). */
export const GET = route(
  { name: "GET /api/admin/authority", access: "admin" },
  async ({ database: { db } }) => json(await readAuthority({ db })),
);

/**
 * Set a limit (`{ subjectKind, subjectId, agentId?, action?, perDecisionCents?, perDayCents? }`, replacing the one of
 * the same subject and scope) or take one away (`{ remove: id }`): 200 with the limits after it; 422
 * `unprocessable:authority_limit` for an unknown user, team or agent, or a limit that caps nothing.
 */
export const POST = route<Record<string, never>, AuthorityChange>(
  {
    name: "POST /api/admin/authority",
    access: "admin",
    body: { schema: authorityChange, code: "bad_request:authority", what: "The limit" },
  },
  async ({ body, principal, database: { db } }) =>
    json(await changeAuthority({ db, change: body, by: principal })),
);
