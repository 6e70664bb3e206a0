import { json, route } from "@/lib/http/route";
import { readInbox } from "@/lib/queue/inbox-view";
import { createTicket } from "@/lib/runtime/runs/tickets";
import { createThreadBody, inboxListArgs, inboxQuery } from "./schema";

export const dynamic = "force-dynamic";

/**
 * The inbox: pending decisions oldest first (default), or threads by `status` newest-updated first, keyset-paged.
 * Query parameters are described by `inboxQuery`; the response is `{ items, nextCursor }`.
 */
export const GET = route(
  {
    name: "GET /api/threads",
    access: "viewer",
    query: { schema: inboxQuery, code: "bad_request:inbox", what: "The inbox query" },
  },
  async ({ query, principal, database: { db }, scope }) => {
    const { hiddenAgents } = await scope();
    return json(await readInbox({ db, ...inboxListArgs(query, principal.id), hiddenAgents, principal }));
  },
);

/** Create a thread for a customer ticket (audited). Starting its run is a separate request (`POST …/runs`). */
export const POST = route(
  {
    name: "POST /api/threads",
    access: { intakeOr: "operator" },
    body: { schema: createThreadBody, code: "bad_request:thread", what: "The ticket" },
  },
  async ({ body, principal, database }) => {
    const thread = await createTicket({ db: database.db, by: principal, ...body });
    return json({ threadId: thread.id, title: thread.title }, { status: 201 });
  },
);
