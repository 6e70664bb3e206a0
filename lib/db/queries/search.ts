import "server-only";
import { sql } from "drizzle-orm";
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

/**
 * Find threads by order number (exact), customer email (exact, case-insensitive), thread id (exact), customer name
 * or the text of the ticket (full text, word prefixes, the 'simple' configuration). Every branch is answered from an
 * index: `threads_order_ref_idx`, `decisions_order_idx`, `orders_email_idx`, `threads_pkey`, the GIN indexes
 * `orders_name_search_idx`, `decisions_customer_search_idx` and `threads_search_idx`. Newest-updated first.
 */
export function buildSearchQuery({ q, limit }: { q: string; limit: number }) {
  const text = q.trim();
  const words = prefixQuery(text);
  const branches = [
    sql`SELECT id AS thread_id, 'thread' AS matched, 0 AS rank FROM threads WHERE id = ${text}`,
  ];
  if (ORDER.test(text)) {
    const order = text.toUpperCase();
    branches.push(sql`SELECT id, 'order', 0 FROM threads WHERE order_ref = ${order}`);
    branches.push(sql`SELECT thread_id, 'order', 0 FROM decisions WHERE order_id = ${order}`);
  }
  if (EMAIL.test(text)) {
    branches.push(sql`SELECT t.id, 'email', 0 FROM orders o JOIN threads t ON t.order_ref = o.id
      WHERE lower(o.customer_email) = lower(${text})`);
  }
  // An order number or an email is looked up exactly; words search names and text (no per-branch LIMIT there: with
  // one the planner prefers a sequential scan that stops early, which never comes for a rare word).
  if (words && !ORDER.test(text) && !EMAIL.test(text)) {
    branches.push(sql`SELECT t.id, 'name', 1 FROM orders o JOIN threads t ON t.order_ref = o.id
      WHERE to_tsvector('simple', o.customer_name) @@ to_tsquery('simple', ${words})`);
    branches.push(sql`SELECT thread_id, 'name', 1 FROM decisions
      WHERE to_tsvector('simple', coalesce(customer_name, '')) @@ to_tsquery('simple', ${words})`);
    branches.push(sql`SELECT id, 'text', 2 FROM threads
      WHERE to_tsvector('simple', title || ' ' || customer_message) @@ to_tsquery('simple', ${words})`);
  }
  const union = sql.join(
    branches.map((b) => sql`(${b})`),
    sql` UNION ALL `,
  );
  return sql`
    WITH hits AS (${union}),
    best AS (SELECT DISTINCT ON (thread_id) thread_id, matched, rank FROM hits ORDER BY thread_id, rank)
    SELECT t.id AS "threadId", t.title, t.status, t.order_ref AS "orderRef",
      o.customer_name AS "customerName", o.customer_email AS "customerEmail",
      to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt", b.matched
    FROM best b JOIN threads t ON t.id = b.thread_id LEFT JOIN orders o ON o.id = t.order_ref
    ORDER BY b.rank, t.updated_at DESC, t.id
    LIMIT ${limit}`;
}

export async function searchThreads({
  db,
  q,
  limit = 20,
}: {
  db: Queryable;
  q: string;
  limit?: number;
}): Promise<SearchHit[]> {
  const result: unknown = await db.execute(buildSearchQuery({ q, limit }));
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as SearchHit[];
}
