import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { queryTerms } from "../search-terms";
import type { Queryable } from "../tx";
import { customerSubjectId, erasedThreads, openTextColumn, subjectOpener } from "../vault";

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
/** How many of the newest threads a word search tests first (a word in one ticket of 25 has its 20 there). */
export const RECENT_WINDOW = 500;
/**
 * How many word matches a search reads through the full-text index before it calls the word common. Up to this many,
 * all of them are read and the newest shown; more, and the newest are found by walking all threads newest first.
 */
export const MAX_MATCHES = 1000;
/**
 * A customer name's matches are read through its index first, up to this many: testing the newest threads' names
 * costs a lookup of each one's order, which a rare name (or a word that is nobody's name) should not pay.
 */
export const NAME_MATCHES = 200;
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
 * One way a search can match, as its own statement (merged by {@link searchThreads}). A word search answers exactly —
 * the newest `limit` of all matches, never of a sample, never by sorting every match of a common word — in one
 * statement, or two when a word has many matches few of which are recent. Its statement has two parts, the second
 * behind a one-time filter (not run at all when the first answered):
 * - the index read: at most N + 1 matches through the GIN index; when that was all of them, the newest are the answer
 *   (`capped` false; a row of nulls when nothing matched) — rare words;
 * - the recent window: the newest {@link RECENT_WINDOW} threads tested newest first; `limit` hits there are the
 *   answer (any newer match would be in the window; `capped` null) — a common word or name, a few hundred rows.
 * Words of the ticket try the window first (a stored vector per row: cheap), names the index read first (a window row
 * costs its order's lookup). When neither answered (`capped` true, or fewer than `limit` window rows), `common` walks
 * all threads newest first to the limit.
 */
export interface SearchBranch {
  matched: "thread" | "order" | "email" | "name" | "text";
  query: SQL;
  common?: SQL;
}

const hitColumns = sql`t.id AS "threadId", t.title, t.status, t.customer_order AS "orderRef",
  o.customer_name AS "customerName", o.customer_email AS "customerEmail", o.subject_id AS "customerSubject",
  to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt"`;
const newest = sql`t.updated_at DESC, t.id DESC`;

/**
 * The statements of a search, best kind of match first: thread id, order number, customer email (exact), customer
 * name, words of the ticket (full text on stored vectors, word prefixes, the 'simple' configuration). Each is its own
 * statement with its own plan; an order number or an email is only looked up exactly.
 */
export function buildSearchQueries({
  q,
  limit,
  maxMatches = MAX_MATCHES,
  nameMatches = NAME_MATCHES,
  recentWindow = RECENT_WINDOW,
  hiddenAgents = [],
}: {
  q: string;
  limit: number;
  /** Agents whose threads the reader may not see (teams): left out inside every statement, so a page is full. */
  hiddenAgents?: readonly string[];
  maxMatches?: number;
  nameMatches?: number;
  recentWindow?: number;
}): SearchBranch[] {
  const text = q.trim();
  const terms = prefixQuery(text);
  const from = sql`FROM threads t LEFT JOIN orders o ON o.id = t.customer_order`;
  const seen =
    hiddenAgents.length > 0
      ? sql` AND t.agent_id NOT IN (${sql.join(
          hiddenAgents.map((a) => sql`${a}`),
          sql`, `,
        )})`
      : sql``;
  const branches: SearchBranch[] = [
    { matched: "thread", query: sql`SELECT ${hitColumns} ${from} WHERE t.id = ${text}${seen}` },
  ];
  if (ORDER.test(text)) {
    const order = text.toUpperCase();
    branches.push({
      matched: "order",
      query: sql`SELECT ${hitColumns} ${from} WHERE t.customer_order = ${order}${seen} ORDER BY ${newest} LIMIT ${limit}`,
    });
    branches.push({
      matched: "order",
      query: sql`SELECT ${hitColumns} ${from}
        WHERE t.id IN (SELECT thread_id FROM decisions WHERE order_id = ${order} LIMIT ${limit})${seen}`,
    });
  } else if (EMAIL.test(text)) {
    branches.push({
      matched: "email",
      query: sql`SELECT ${hitColumns} FROM orders o JOIN threads t ON t.customer_order = o.id
        WHERE (o.subject_id = ${customerSubjectId(text)} OR lower(o.customer_email) = lower(${text}))${seen}
        ORDER BY ${newest} LIMIT ${limit}`,
    });
  } else if (terms) {
    const tsq = sql`to_tsquery('simple', ${terms})`;
    const digests = sql`${sql.param(queryTerms(text) ?? [])}::text[]`;
    const recent = sql`(SELECT * FROM threads t ORDER BY ${newest} LIMIT ${recentWindow}) t`;
    // The index read: `every` match, planned as a whole (so through the GIN index: with the LIMIT inside, a small cap
    // made the planner - who cannot estimate a prefix query - prefer a sequential scan, and it would rather walk the
    // recency index too; both read the whole table for a rare word), read as far as `m` needs: cap + 1 rows. Its hits
    // are read only when that was every match.
    const indexRead = (hits: SQL, cap: number, gate: SQL) => sql`
      SELECT c.matches > ${cap} AS capped, h.* FROM (SELECT count(*)::int AS matches FROM m) c
        LEFT JOIN LATERAL (${hits} AND c.matches <= ${cap} ORDER BY ${newest} LIMIT ${limit}) h ON true
      WHERE ${gate}`;
    // Names: the index read first, then the window when the name is common (each recent thread's order looked up by
    // its key; LIMIT 1 keeps the planner from hashing every order of the name instead).
    const nameCap = Math.min(maxMatches, nameMatches);
    // A name in clear is matched by its vector, a sealed one by its words' blind index (lib/db/search-terms.ts).
    const nameMatch = sql`SELECT id, customer_name, customer_email, subject_id FROM orders WHERE name_tsv @@ ${tsq}
      UNION ALL SELECT o.id, o.customer_name, o.customer_email, o.subject_id
        FROM order_names n JOIN orders o ON o.id = n.order_id WHERE n.terms @> ${digests}`;
    const named = (order: SQL) =>
      sql`(${order}.name_tsv @@ ${tsq} OR EXISTS (SELECT 1 FROM order_names n WHERE n.order_id = ${order}.id
        AND n.terms @> ${digests}))`;
    branches.push({
      matched: "name",
      query: sql`WITH every AS MATERIALIZED (${nameMatch}),
          m AS MATERIALIZED (SELECT * FROM every LIMIT ${nameCap + 1}),
          few AS MATERIALIZED (SELECT count(*) <= ${nameCap} AS yes FROM m)
        ${indexRead(
          sql`SELECT ${hitColumns} FROM m o JOIN threads t ON t.customer_order = o.id WHERE true${seen}`,
          nameCap,
          sql`(SELECT yes FROM few)`,
        )}
        UNION ALL
        SELECT NULL::boolean, w.* FROM (
          SELECT ${hitColumns} FROM ${recent} JOIN LATERAL (SELECT customer_name, customer_email, subject_id FROM orders
              WHERE id = t.customer_order AND ${named(sql`orders`)} LIMIT 1) o ON true
          WHERE NOT (SELECT yes FROM few)${seen} ORDER BY ${newest} LIMIT ${limit}) w`,
      common: sql`SELECT ${hitColumns} FROM threads t JOIN orders o ON o.id = t.customer_order
        WHERE ${named(sql`o`)}${seen} ORDER BY ${newest} LIMIT ${limit}`,
    });
    // Words of the ticket: the window first, then the index read when the window had fewer than a page. A ticket in
    // clear is matched by its vector, a sealed one by its words' blind index (lib/db/search-terms.ts).
    const words = sql`(t.search_tsv @@ ${tsq}
      OR EXISTS (SELECT 1 FROM thread_search s WHERE s.thread_id = t.id AND s.terms @> ${digests}))`;
    branches.push({
      matched: "text",
      query: sql`WITH w AS MATERIALIZED (SELECT ${hitColumns} FROM ${recent} LEFT JOIN orders o ON o.id = t.customer_order
            WHERE ${words}${seen} ORDER BY ${newest} LIMIT ${limit}),
          enough AS MATERIALIZED (SELECT count(*) >= ${limit} AS yes FROM w),
          every AS MATERIALIZED (SELECT id FROM threads WHERE search_tsv @@ ${tsq} AND NOT (SELECT yes FROM enough)
            UNION ALL SELECT thread_id FROM thread_search WHERE terms @> ${digests} AND NOT (SELECT yes FROM enough)),
          m AS MATERIALIZED (SELECT * FROM every LIMIT ${maxMatches + 1})
        SELECT NULL::boolean AS capped, w.* FROM w WHERE (SELECT yes FROM enough)
        UNION ALL
        ${indexRead(
          sql`SELECT ${hitColumns} FROM m JOIN threads t ON t.id = m.id LEFT JOIN orders o ON o.id = t.customer_order
            WHERE true${seen}`,
          maxMatches,
          sql`NOT (SELECT yes FROM enough)`,
        )}`,
      common: sql`SELECT ${hitColumns} ${from} WHERE ${words}${seen} ORDER BY ${newest} LIMIT ${limit}`,
    });
  }
  return branches;
}

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/** A hit as its statement returns it: with the subject its customer's name and email are sealed under. */
type HitRow = Omit<SearchHit, "matched"> & { customerSubject: string | null };

/** A branch's rows: its statement's, or the walk's when the statement could not answer (see {@link SearchBranch}). */
async function runBranch(db: Queryable, branch: SearchBranch, limit: number): Promise<HitRow[]> {
  const rows = rowsOf<HitRow & { capped?: boolean | null }>(await db.execute(branch.query));
  const capped = rows[0]?.capped;
  const answered = capped === false || (capped == null && rows.length >= limit);
  if (branch.common && !answered) return rowsOf<HitRow>(await db.execute(branch.common));
  return rows.filter((r) => r.threadId !== null).map(({ capped: _capped, ...hit }) => hit);
}

/** Threads matching `q`, best kind of match first, then newest-updated; each thread once. */
export async function searchThreads({
  db,
  q,
  limit = 20,
  maxMatches = MAX_MATCHES,
  nameMatches = NAME_MATCHES,
  recentWindow = RECENT_WINDOW,
  hiddenAgents = [],
}: {
  db: Queryable;
  q: string;
  /** Agents whose threads the reader may not see (teams): never a hit. */
  hiddenAgents?: readonly string[];
  limit?: number;
  /** See {@link MAX_MATCHES}, {@link NAME_MATCHES} and {@link RECENT_WINDOW} (tests change them). */
  maxMatches?: number;
  nameMatches?: number;
  recentWindow?: number;
}): Promise<SearchHit[]> {
  const hits = new Map<string, HitRow & { matched: SearchHit["matched"] }>();
  for (const branch of buildSearchQueries({
    q,
    limit,
    maxMatches,
    nameMatches,
    recentWindow,
    hiddenAgents,
  })) {
    for (const row of await runBranch(db, branch, limit)) {
      if (!hits.has(row.threadId)) hits.set(row.threadId, { ...row, matched: branch.matched });
    }
    if (hits.size >= limit) break;
  }
  // A thread of an erased customer is never a hit (a database restored from before the erasure still holds its index
  // rows); a sealed ticket's title and a sealed customer's name and email are opened for the page.
  const found = [...hits.values()];
  const erased = await erasedThreads(
    db,
    found.map((h) => h.threadId),
  );
  const page = await openTextColumn(
    db,
    found.filter((h) => !erased.has(h.threadId)).slice(0, limit),
    "title",
  );
  const open = await subjectOpener(
    db,
    page.map((h) => h.customerSubject),
  );
  return page.map(({ customerSubject, ...hit }) => ({
    ...hit,
    customerName: hit.customerName && open(customerSubject, hit.customerName),
    customerEmail: hit.customerEmail && open(customerSubject, hit.customerEmail),
  }));
}
