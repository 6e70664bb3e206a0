import { json, route } from "@/lib/http/route";
import { mayDecide } from "@/lib/runtime/agents/may-decide";
import { getThreadView } from "@/lib/runtime/views/thread-view";

export const dynamic = "force-dynamic";

/**
 * The thread's state: values, status, pending interrupts (validated through the contract), decisions, last seq — and
 * `mayDecide`: for each pending decision, whether the caller may take the one that acts (approve, send, grant), and
 * if not, why (four-eyes, role), so a form knows the rules before the click.
 */
export const GET = route<{ threadId: string }>(
  { name: "GET /api/threads/[threadId]", access: "viewer" },
  async ({ params, principal, database: { db } }) => {
    const view = await getThreadView({ db, threadId: params.threadId });
    return json({ ...view, mayDecide: await mayDecide({ db, threadId: params.threadId, principal }) });
  },
);
