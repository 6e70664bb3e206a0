import { json, route } from "@/lib/route";
import { getThreadView } from "@/lib/runtime/thread-view";

export const dynamic = "force-dynamic";

/** The thread's state: values, status, pending interrupts (validated through the contract), decisions, last seq. */
export const GET = route<{ threadId: string }>(
  { name: "GET /api/threads/[threadId]", access: "viewer" },
  async ({ params }) => json(await getThreadView(params.threadId)),
);
