import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { route } from "@/lib/http/route";
import { inboxStreamResponse } from "@/lib/queue/inbox-stream";

export const dynamic = "force-dynamic";

const streamQuery = z.strictObject({
  /** The last change id seen (EventSource sends it as Last-Event-ID on its own reconnects). */
  after: z.coerce.number().int().min(0).max(2_147_483_647).optional(),
  /** `1`: end after the first frame (ready, or what was missed): a one-shot catch-up. */
  once: z.enum(["1"]).optional(),
});

/**
 * The live inbox: server-sent events of inbox changes (decisions raised, decided, claimed, released, escalated),
 * fed by LISTEN/NOTIFY. Reconnect with `Last-Event-ID` (or `?after=`) to hear what was missed.
 */
export const GET = route<Record<string, never>, undefined, z.infer<typeof streamQuery>>(
  {
    name: "GET /api/inbox/stream",
    access: "viewer",
    query: { schema: streamQuery, code: "bad_request:inbox_stream", what: "The inbox stream query" },
  },
  async ({ request, query, database: { db }, scope }) => {
    const header = request.headers.get("last-event-id");
    let after = query.after;
    if (header !== null && header !== "") {
      if (!/^\d{1,10}$/.test(header)) {
        throw new AppError("bad_request:inbox_stream", "Last-Event-ID must be a change id.");
      }
      after = Number(header);
    }
    return inboxStreamResponse({ db, after, once: query.once === "1", scope: await scope() }, request.signal);
  },
);
