import { requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { errorResponse } from "@/lib/errors";
import { getThreadHistory, parseHistoryQuery } from "@/lib/runtime/history-view";

export const dynamic = "force-dynamic";

/**
 * A page of the thread's checkpoint tree (root namespace), newest first: who wrote each checkpoint, its branch label,
 * the head, where the run paused. `?before=<checkpointId>&limit=<1..200>`; follow `nextCursor` for older pages.
 */
export async function GET(request: Request, { params }: { params: Promise<{ threadId: string }> }) {
  try {
    await requireRole(request, "viewer");
    const { threadId } = await params;
    const query = parseHistoryQuery(new URL(request.url).searchParams);
    const { db, sql } = await getDatabase();
    const history = await getThreadHistory({ db, sql }, { threadId, ...query });
    return Response.json(history, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "GET /api/threads/[threadId]/history");
  }
}
