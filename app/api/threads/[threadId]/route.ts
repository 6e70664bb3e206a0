import { requireRole } from "@/lib/auth/principal";
import { errorResponse } from "@/lib/errors";
import { getThreadView } from "@/lib/runtime/thread-view";

export const dynamic = "force-dynamic";

/** The thread's state: values, status, pending interrupts (validated through the contract), decisions, last seq. */
export async function GET(request: Request, { params }: { params: Promise<{ threadId: string }> }) {
  try {
    await requireRole(request, "viewer");
    const { threadId } = await params;
    return Response.json(await getThreadView(threadId), { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "GET /api/threads/[threadId]");
  }
}
