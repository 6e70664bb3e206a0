import { type ForkBody, forkBody } from "@/app/api/threads/schema";
import { json, route } from "@/lib/route";
import { checkFork } from "@/lib/runtime/fork";

export const dynamic = "force-dynamic";

/**
 * The fork's checks of its edits, without forking: 200 `{ ok: true }`, or the 422 the fork would answer, with each
 * field's rule in the agent's words (`details.issues`). The fork form asks while its fields are typed. Writes nothing.
 */
export const POST = route<{ threadId: string }, ForkBody>(
  {
    name: "POST /api/threads/[threadId]/fork/check",
    access: "supervisor",
    body: { schema: forkBody, code: "bad_request:fork", what: "The fork request" },
  },
  async ({ params: { threadId }, body }) => {
    await checkFork({ threadId, ...body });
    return json({ ok: true });
  },
);
