import { getDatabase } from "@/lib/db/client";
import { createThread } from "@/lib/db/queries/threads";
import { errorResponse } from "@/lib/errors";
import { parseWith, readJson } from "@/lib/http";
import { createThreadBody } from "./schema";

export const dynamic = "force-dynamic";

/** Create a thread for a customer ticket. Starting its run is a separate request (`POST …/runs`). */
export async function POST(request: Request) {
  try {
    const body = parseWith(createThreadBody, await readJson(request), "bad_request:thread", "The ticket");
    const { db } = await getDatabase();
    const thread = await createThread({
      db,
      title: body.title ?? body.message.slice(0, 80),
      customerMessage: body.message,
      orderRef: body.orderRef ?? null,
    });
    return Response.json({ threadId: thread.id, title: thread.title }, { status: 201 });
  } catch (error) {
    return errorResponse(error, "POST /api/threads");
  }
}
