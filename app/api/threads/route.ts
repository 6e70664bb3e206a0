import { requireIntakeOrRole, requireRole } from "@/lib/auth/principal";
import { getDatabase } from "@/lib/db/client";
import { listInbox } from "@/lib/db/queries/inbox";
import { createThread } from "@/lib/db/queries/threads";
import { errorResponse } from "@/lib/errors";
import { assertSameOrigin, parseWith, readJson } from "@/lib/http";
import { createThreadBody, inboxListArgs, inboxQuery } from "./schema";

export const dynamic = "force-dynamic";

/**
 * The inbox: pending decisions oldest first (default), or threads by `status` newest-updated first, keyset-paged.
 * Query parameters are described by `inboxQuery`; the response is `{ items, nextCursor }`.
 */
export async function GET(request: Request) {
  try {
    await requireRole(request, "viewer");
    const params = Object.fromEntries(new URL(request.url).searchParams);
    const query = parseWith(inboxQuery, params, "bad_request:inbox", "The inbox query");
    const { db } = await getDatabase();
    const page = await listInbox({ db, ...inboxListArgs(query) });
    return Response.json(page, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error, "GET /api/threads");
  }
}

/** Create a thread for a customer ticket. Starting its run is a separate request (`POST …/runs`). */
export async function POST(request: Request) {
  try {
    assertSameOrigin(request);
    const principal = await requireIntakeOrRole(request, "operator");
    const body = parseWith(createThreadBody, await readJson(request), "bad_request:thread", "The ticket");
    const { db } = await getDatabase();
    const thread = await createThread({
      db,
      title: body.title ?? body.message.slice(0, 80),
      customerMessage: body.message,
      orderRef: body.orderRef ?? null,
      createdBy: principal.id,
    });
    return Response.json({ threadId: thread.id, title: thread.title }, { status: 201 });
  } catch (error) {
    return errorResponse(error, "POST /api/threads");
  }
}
