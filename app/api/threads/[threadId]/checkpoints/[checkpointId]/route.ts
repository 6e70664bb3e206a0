import { requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { errorResponse } from "@/lib/errors";
import { getCheckpointView } from "@/lib/runtime/checkpoint-view";
import { getRefundGraph } from "@/lib/runtime/graph";

export const dynamic = "force-dynamic";

/**
 * One checkpoint of the thread: its state (values, AG-UI messages), what is next, the writes and interrupts of the
 * tasks that ran from it, and a jsondiffpatch delta against its parent.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ threadId: string; checkpointId: string }> },
) {
  try {
    await requireRole(request, "viewer");
    const { threadId, checkpointId } = await params;
    const [{ db, sql }, graph] = await Promise.all([getDatabase(), getRefundGraph()]);
    const view = await getCheckpointView({ db, sql, graph }, { threadId, checkpointId });
    return Response.json(view, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "GET /api/threads/[threadId]/checkpoints/[checkpointId]");
  }
}
