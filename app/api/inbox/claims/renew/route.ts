import { json, route } from "@/lib/http/route";
import { renewForPrincipal } from "@/lib/queue/claims";

export const dynamic = "force-dynamic";

/** The heartbeat of an open console tab: the operator's live claims hold for another TTL. */
export const POST = route(
  { name: "POST /api/inbox/claims/renew", access: "operator" },
  async ({ principal, database: { db } }) => json(await renewForPrincipal({ db, principal })),
);
