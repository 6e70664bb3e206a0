import { json, route } from "@/lib/http/route";
import { releaseForPrincipal } from "@/lib/queue/claims";

export const dynamic = "force-dynamic";

/** Release one's claim of a decision (a supervisor: anyone's). 200 `{ released }` (false: there was none). */
export const DELETE = route<{ interruptId: string }>(
  { name: "DELETE /api/inbox/claims/[interruptId]", access: "operator" },
  async ({ params: { interruptId }, principal, database: { db } }) =>
    json({ released: await releaseForPrincipal({ db, principal, interruptId }) }),
);
