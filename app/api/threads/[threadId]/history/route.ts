import type { z } from "zod";
import { json, route } from "@/lib/http/route";
import { getThreadHistory, historyQuery } from "@/lib/runtime/views/history-view";

export const dynamic = "force-dynamic";

/**
 * A page of the thread's checkpoint tree (root namespace), newest first: who wrote each checkpoint, its branch label,
 * the head, where the run paused. `?before=<checkpointId>&limit=<1..200>`; follow `nextCursor` for older pages.
 */
export const GET = route<{ threadId: string }, undefined, z.infer<typeof historyQuery>>(
  {
    name: "GET /api/threads/[threadId]/history",
    access: "viewer",
    query: { schema: historyQuery, code: "bad_request:history", what: "The history query" },
  },
  async ({ params, query, database }) => json(await getThreadHistory(database, { ...params, ...query })),
);
