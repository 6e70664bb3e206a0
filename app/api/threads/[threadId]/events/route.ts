import { requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { getActiveRun } from "@/lib/db/queries/runs";
import { getThread } from "@/lib/db/queries/threads";
import { AppError, errorResponse } from "@/lib/errors";
import { eventStreamResponse } from "@/lib/runtime/stream";

export const dynamic = "force-dynamic";

/**
 * Reconnect: the thread's logged events after `?after=<seq>`, then the live ones while a run is active, then the
 * stream ends. With no active run it returns what is logged and ends. Every event carries its seq (`id:` and
 * `metadata.seq`), so a client that reconnects with its last seq sees nothing twice and misses nothing.
 */
export async function GET(request: Request, { params }: { params: Promise<{ threadId: string }> }) {
  try {
    await requireRole(request, "viewer");
    const { threadId } = await params;
    const raw = new URL(request.url).searchParams.get("after") ?? request.headers.get("last-event-id") ?? "0";
    if (!/^\d{1,15}$/.test(raw))
      throw new AppError("bad_request:events", "`after` must be a sequence number ≥ 0.");
    const { db } = await getDatabase();
    if (!(await getThread({ db, threadId })))
      throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
    const active = await getActiveRun({ db, threadId });
    return eventStreamResponse({ db, threadId, afterSeq: Number(raw), runId: active?.id }, request.signal);
  } catch (error) {
    return errorResponse(error, "GET /api/threads/[threadId]/events");
  }
}
