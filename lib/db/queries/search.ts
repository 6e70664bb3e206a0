import "server-only";
import { type SQL, sql } from "drizzle-orm";
import type { Queryable } from "../tx";

/** A thread found by search. */
export interface SearchHit {
  threadId: string;
  title: string;
  status: string;
  orderRef: string | null;
  customerName: string | null;
  customerEmail: string | null;
  /** ISO 8601. */
  updatedAt: string;
  /** What matched: order | email | thread | name | text. */
  matched: string;
}

const ORDER = /^ord-\d{1,10}$/i;
/** How many word matches a search reads at most before picking the newest. */
const MAX_MATCHES = 1000;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Words of a free-text query as a prefix tsquery (`refund:* & broke:*`), or null when it has no words. */
export function prefixQuery(q: string): string | null {
  const words =
    q
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu)
      ?.slice(0, 8) ?? [];
  return words.length ? words.map((w) => `${w}:*`).join(" & ") : null;
}

/** One way a search can match, as its own statement (merged by {@link searchThreads}). */
export interface SearchBranch {
  matched: "thread" | "order" | "email" | "name" | "text";
  query: SQL;
}

const hitColumns = sql`t.id AS "threadId", t.title, t.status, t.order_ref AS "orderRef",
  o.customer_name AS "customerName", o.customer_email AS "customerEmail",
  to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt"`;

/**
 * The statements of a search, best kind of match first: thread id, order number, customer email (exact), customer
 * name, words of the ticket (full text, word prefixes, the 'simple' configuration). Each is its own statement with
 * its own plan; an order number or an email is only looked up exactly.
 */
export function buildSearchQueries({ q, limit }: { q: string; limit: number }): SearchBranch[] {
  const text = q.trim();
  const words = prefixQuery(text);
  const from = sql`FROM threads t LEFT JOIN orders o ON o.id = t.order_ref`;
  const branches: SearchBranch[] = [
    { matched: "thread", query: sql`SELECT ${hitColumns} ${from} WHERE t.id = ${text}` },
  ];
  if (ORDER.test(text)) {
    const order = text.toUpperCase();
    branches.push({
      matched: "order",
      query: sql`SELECT ${hitColumns} ${from} WHERE t.order_ref = ${order} ORDER BY t.updated_at DESC LIMIT ${limit}`,
    });
    branches.push({
      matched: "order",
      query: sql`SELECT ${hitColumns} ${from}
        WHERE t.id IN (SELECT thread_id FROM decisions WHERE order_id = ${order} LIMIT ${limit})`,
    });
  } else if (EMAIL.test(text)) {
    branches.push({
      matched: "email",
      query: sql`SELECT ${hitColumns} FROM orders o JOIN threads t ON t.order_ref = o.id
        WHERE lower(o.customer_email) = lower(${text}) ORDER BY t.updated_at DESC LIMIT ${limit}`,
    });
  } else if (words) {
    // Matches are read through the GIN index, at most MAX_MATCHES of them (a word in every tenth ticket must not
    // sort ten thousand rows), and the newest of those are shown. A materialized CTE keeps the planner from walking
    // the recency index instead, which it prefers for prefix queries it cannot estimate — and which reads the whole
    // table for a rare word.
    branches.push({
      matched: "name",
      query: sql`WITH m AS MATERIALIZED (
          SELECT id FROM orders WHERE to_tsvector('simple', customer_name) @@ to_tsquery('simple', ${words})
          LIMIT ${MAX_MATCHES})
        SELECT ${hitColumns} FROM m JOIN orders o ON o.id = m.id JOIN threads t ON t.order_ref = o.id
        ORDER BY t.updated_at DESC LIMIT ${limit}`,
    });
    branches.push({
      matched: "text",
      query: sql`WITH m AS MATERIALIZED (
          SELECT id FROM threads
          WHERE to_tsvector('simple', title || ' ' || customer_message) @@ to_tsquery('simple', ${words})
          LIMIT ${MAX_MATCHES})
        SELECT ${hitColumns} FROM m JOIN threads t ON t.id = m.id LEFT JOIN orders o ON o.id = t.order_ref
        ORDER BY t.updated_at DESC LIMIT ${limit}`,
    });
  }
  return branches;
}

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/** Threads matching `q`, best kind of match first, then newest-updated; each thread once. */
export async function searchThreads({
  db,
  q,
  limit = 20,
}: {
  db: Queryable;
  q: string;
  limit?: number;
}): Promise<SearchHit[]> {
  const hits = new Map<string, SearchHit>();
  for (const branch of buildSearchQueries({ q, limit })) {
    for (const row of rowsOf<Omit<SearchHit, "matched">>(await db.execute(branch.query))) {
      if (!hits.has(row.threadId)) hits.set(row.threadId, { ...row, matched: branch.matched });
    }
    if (hits.size >= limit) break;
  }
  return [...hits.values()].slice(0, limit);
}
