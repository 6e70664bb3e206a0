import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { route } from "@/lib/http/route";
import { followThreadEvents } from "@/lib/runtime/runs/follow";

export const dynamic = "force-dynamic";

const seq = z.string().regex(/^\d{1,15}$/, "must be a sequence number ≥ 0");
const eventsQuery = z.strictObject({ after: seq.optional() });

/**
 * Reconnect: the thread's logged events after `?after=<seq>` (or `Last-Event-ID`), then the live ones while a run is
 * active, then the stream ends. Every event carries its seq (`id:` and `metadata.seq`), so a client that reconnects
 * with its last seq sees nothing twice and misses nothing. Retention compacts the log of finished runs: a client
 * asking for events before the thread's compacted seq gets a snapshot at that seq (RUN_STARTED, MESSAGES_SNAPSHOT,
 * STATE_SNAPSHOT, RUN_FINISHED, each with that seq) and then the events after it.
 */
export const GET = route<{ threadId: string }, undefined, z.infer<typeof eventsQuery>>(
  {
    name: "GET /api/threads/[threadId]/events",
    access: "viewer",
    query: { schema: eventsQuery, code: "bad_request:events", what: "The events query" },
  },
  async ({ request, params: { threadId }, query, database: { db } }) => {
    const after = seq.safeParse(query.after ?? request.headers.get("last-event-id") ?? "0");
    if (!after.success) throw new AppError("bad_request:events", "`after` must be a sequence number ≥ 0.");
    return followThreadEvents({ db, threadId, afterSeq: Number(after.data), signal: request.signal });
  },
);
