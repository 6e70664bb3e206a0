import { json, route } from "@/lib/route";
import { getCheckpointView } from "@/lib/runtime/checkpoint-view";
import { getRefundGraph } from "@/lib/runtime/graph";

export const dynamic = "force-dynamic";

/**
 * One checkpoint of the thread: its state (values, AG-UI messages), what is next, the writes and interrupts of the
 * tasks that ran from it, and a jsondiffpatch delta against its parent.
 */
export const GET = route<{ threadId: string; checkpointId: string }>(
  { name: "GET /api/threads/[threadId]/checkpoints/[checkpointId]", access: "viewer" },
  async ({ params, database }) =>
    json(await getCheckpointView({ ...database, graph: await getRefundGraph() }, params)),
);
