import { type ForkBody, forkBody } from "@/app/api/threads/schema";
import { json, route } from "@/lib/http/route";
import { checkFork } from "@/lib/runtime/runs/fork";

export const dynamic = "force-dynamic";

/**
 * The fork's checks, without forking: 200 `{ ok: true }`, or the refusal the fork would answer for the same body —
 * 404 for a thread or a checkpoint it does not have, 409 while a run is active, 422 with each field's rule in the
 * agent's words (`details.issues`). The fork form asks while its fields are typed. Writes nothing.
 */
export const POST = route<{ threadId: string }, ForkBody>(
  {
    name: "POST /api/threads/[threadId]/fork/check",
    access: "supervisor",
    body: { schema: forkBody, code: "bad_request:fork", what: "The fork request" },
  },
  async ({ params: { threadId }, body, database }) => {
    await checkFork({ database, threadId, ...body });
    return json({ ok: true });
  },
);
