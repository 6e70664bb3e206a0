import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { closeThread } from "@/lib/runtime/runs/tickets";

export const dynamic = "force-dynamic";

const closeBody = z.strictObject({ note: z.string().trim().min(1, "say why it is closed").max(2000) });

/** Close a thread with a note (supervisors): for a thread no deployed version can run; its open decisions lapse. */
export const POST = route<{ threadId: string }, z.infer<typeof closeBody>>(
  {
    name: "POST /api/threads/[threadId]/close",
    access: "supervisor",
    body: { schema: closeBody, code: "bad_request:close", what: "The close request" },
  },
  async ({ params: { threadId }, body, principal, database: { db } }) =>
    json(await closeThread({ db, threadId, by: principal, note: body.note })),
);
