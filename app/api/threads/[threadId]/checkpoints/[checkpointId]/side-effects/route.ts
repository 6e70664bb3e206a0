import { requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { getThread } from "@/lib/db/queries/threads";
import { AppError, errorResponse } from "@/lib/errors";
import type { RefundStateValue } from "@/lib/graphs/refund";
import { getRefundGraph } from "@/lib/runtime/graph";
import { sideEffectWarnings } from "@/lib/runtime/side-effects";

export const dynamic = "force-dynamic";

/**
 * What a fork from this checkpoint would reach again: refunds and emails recorded after it (the same warnings the
 * fork answers with), so the console can warn before the operator forks. `{ warnings: SideEffectWarning[] }`.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ threadId: string; checkpointId: string }> },
) {
  try {
    await requireRole(request, "viewer");
    const { threadId, checkpointId } = await params;
    const [{ db }, graph] = await Promise.all([getDatabase(), getRefundGraph()]);
    if (!(await getThread({ db, threadId }))) {
      throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
    }
    const state = await graph.getState({
      configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId },
    });
    // An unknown checkpoint (or another thread's) reads as an empty snapshot without metadata.
    if (!state.metadata) {
      throw new AppError(
        "not_found:checkpoint",
        `Checkpoint ${checkpointId} of thread ${threadId} does not exist.`,
      );
    }
    const warnings = await sideEffectWarnings({
      db,
      threadId,
      values: state.values as Partial<RefundStateValue>,
    });
    return Response.json({ warnings }, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "GET /api/threads/[threadId]/checkpoints/[checkpointId]/side-effects");
  }
}
