import "server-only";
import { type SearchHit, searchThreads } from "@/lib/db/queries/search";
import type { Queryable } from "@/lib/db/tx";

/*
 * Finding a thread (the search page and `GET /api/search`): by order number, customer email or name, thread id or the
 * words of the ticket, among the threads the reader's teams may see.
 */

/** Threads matching `q`, best kind of match first (exact ids before names before text), each once. */
export function findThreads({
  db,
  q,
  limit,
  hiddenAgents,
}: {
  db: Queryable;
  q: string;
  /** At most this many hits (default 20). */
  limit?: number;
  /** Agents whose threads the reader may not see (teams): never a hit. */
  hiddenAgents: readonly string[];
}): Promise<SearchHit[]> {
  return searchThreads({ db, q, limit, hiddenAgents });
}
