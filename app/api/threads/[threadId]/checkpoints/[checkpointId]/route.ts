import { json, route } from "@/lib/http/route";
import { agentOfThread } from "@/lib/runtime/agents/registry";
import { getCheckpointView } from "@/lib/runtime/views/checkpoint-view";

export const dynamic = "force-dynamic";

/**
 * One checkpoint of the thread: its state (values, AG-UI messages), what is next, the writes and interrupts of the
 * tasks that ran from it, and a jsondiffpatch delta against its parent.
 */
export const GET = route<{ threadId: string; checkpointId: string }>(
  { name: "GET /api/threads/[threadId]/checkpoints/[checkpointId]", access: "viewer" },
  async ({ params, database }) => {
    const { agent, graph } = await agentOfThread({ db: database.db, threadId: params.threadId, read: true });
    return json(await getCheckpointView({ ...database, graph, agent }, params));
  },
);
