import { z } from "zod";
import { json, route } from "@/lib/http/route";
import { findThreads } from "@/lib/runtime/views/search-view";

export const dynamic = "force-dynamic";

const searchQuery = z.strictObject({
  /** An order number, a customer email or name, a thread id, or words of the ticket. */
  q: z.string().trim().min(1, "type something to search for").max(200),
  limit: z.coerce.number().int().min(1).max(50).default(20),
});

/** Search threads: `?q=` → `{ hits: [...] }`, best matches first (exact ids before names before text). */
export const GET = route<Record<string, never>, undefined, z.infer<typeof searchQuery>>(
  {
    name: "GET /api/search",
    access: "viewer",
    query: { schema: searchQuery, code: "bad_request:search", what: "The search" },
  },
  async ({ query, database: { db }, scope }) =>
    json({
      hits: await findThreads({
        db,
        q: query.q,
        limit: query.limit,
        hiddenAgents: (await scope()).hiddenAgents,
      }),
    }),
);
