import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { rowsOf } from "../rows";
import type { Thread } from "../schema";
import { queryTerms } from "../search-terms";
import type { Queryable } from "../tx";
import { customerSubjectId, ERASED_TEXT, subjectOpener } from "../vault";
import type { PersonalTable, SubjectScope } from "./personal-columns";
import { openThreads } from "./threads";

export {
  NOT_PERSONAL_COLUMNS,
  PERSONAL_COLUMNS,
  type PersonalColumn,
  type PersonalTable,
} from "./personal-columns";

/*
 * The SQL of erasure by subject (lib/runtime/retention/erasure.ts). Erasure reads the subject's own rows — the rows of their
 * threads, their orders, their account — and writes back only the values it changed, row by row. It never searches
 * text across a table: which rows are the subject's is decided by keys (order, email, thread), and what is personal
 * in them by the declared map below.
 */

/** What identifies the subject in the database. */
export interface SubjectKeys {
  /** The customer's email address, lower case. */
  email: string;
  /** Their account's id (`accountIdOf(email)`). */
  accountId: string;
  threadIds: string[];
  /** Their orders (in clear by email, sealed by subject). */
  orderIds: string[];
}

function scopeWhere(scope: SubjectScope, keys: SubjectKeys): SQL {
  const threads = sql`${sql.param(keys.threadIds)}::text[]`;
  switch (scope.by) {
    case "thread":
      return sql`${sql.identifier(scope.column)} = ANY(${threads})`;
    case "email":
      return sql`lower(${sql.identifier(scope.column)}) = ${keys.email}`;
    case "account":
      return sql`(lower(email) = ${keys.email} OR id = ${keys.accountId})`;
    case "thread_or_email":
      return sql`(${sql.identifier(scope.column)} = ANY(${threads}) OR lower(${sql.identifier(scope.emailColumn)}) = ${keys.email})`;
    case "json_thread":
      return sql`${sql.identifier(scope.column)} ->> 'threadId' = ANY(${threads})`;
  }
}

/** One row of the subject's, as erasure reads it: its physical address in the table, and each personal column. */
export interface SubjectRow {
  ctid: string;
  /** Text columns as text, JSON columns parsed, blob columns as bytes (with `type` for the saver's tables). */
  values: Record<string, unknown>;
  type?: string | null;
}

/**
 * The subject's rows of one table, locked until the transaction ends (so their `ctid` stays theirs): each personal
 * column as text, JSON text (parsed here) or base64 bytes.
 */
export async function listSubjectRows({
  db,
  table,
  keys,
}: {
  db: Queryable;
  table: PersonalTable;
  keys: SubjectKeys;
}): Promise<SubjectRow[]> {
  const name = sql`${sql.identifier(table.schema)}.${sql.identifier(table.table)}`;
  const hasType = table.columns.some((c) => c.kind === "blob");
  const columns = sql.join(
    table.columns.map((c) =>
      c.kind === "jsonb"
        ? sql`${sql.identifier(c.column)}::text AS ${sql.identifier(c.column)}`
        : c.kind === "blob"
          ? sql`encode(${sql.identifier(c.column)}, 'base64') AS ${sql.identifier(c.column)}`
          : sql.identifier(c.column),
    ),
    sql`, `,
  );
  const rows = rowsOf<Record<string, string | null>>(
    await db.execute(sql`SELECT ctid::text AS ctid${hasType ? sql`, type` : sql``}, ${columns} FROM ${name}
      WHERE ${scopeWhere(table.scope, keys)} FOR UPDATE`),
  );
  return rows.map((r) => {
    const values: Record<string, unknown> = {};
    for (const c of table.columns) {
      const raw = r[c.column] ?? null;
      values[c.column] =
        raw === null
          ? null
          : c.kind === "jsonb"
            ? JSON.parse(raw)
            : c.kind === "blob"
              ? Buffer.from(raw.replace(/\s+/g, ""), "base64")
              : raw;
    }
    return { ctid: String(r.ctid), values, ...(hasType ? { type: r.type ?? null } : {}) };
  });
}

/** Write back the changed personal columns of one row read by {@link listSubjectRows} (same transaction). */
export async function updateSubjectRow({
  db,
  table,
  ctid,
  changes,
}: {
  db: Queryable;
  table: PersonalTable;
  ctid: string;
  changes: Record<string, unknown>;
}): Promise<void> {
  const kinds = new Map(table.columns.map((c) => [c.column, c.kind]));
  const sets = Object.entries(changes).map(([column, value]) => {
    const kind = kinds.get(column);
    if (!kind) throw new Error(`erasure: ${table.table}.${column} is not a personal column`);
    const target = sql.identifier(column);
    return kind === "jsonb"
      ? sql`${target} = ${JSON.stringify(value)}::jsonb`
      : kind === "blob"
        ? sql`${target} = decode(${(value as Buffer).toString("base64")}, 'base64')`
        : sql`${target} = ${value as string}`;
  });
  if (sets.length === 0) return;
  await db.execute(
    sql`UPDATE ${sql.identifier(table.schema)}.${sql.identifier(table.table)} SET ${sql.join(sets, sql`, `)}
      WHERE ctid = ${ctid}::tid`,
  );
}

/** The names the shop's orders give for a customer's email address, and those orders' numbers. */
export async function findCustomerOrders({
  db,
  email,
}: {
  db: Queryable;
  email: string;
}): Promise<{ names: string[]; orderIds: string[] }> {
  // Orders in clear by their email; sealed ones by their subject (a blind index of the email), their names opened.
  const rows = rowsOf<{ id: string; name: string; subject_id: string | null }>(
    await db.execute(
      sql`SELECT id, customer_name AS name, subject_id FROM orders
        WHERE lower(customer_email) = ${email} OR subject_id = ${customerSubjectId(email)} ORDER BY id`,
    ),
  );
  // An order sealed under a key erasure destroyed holds nothing of theirs any more (a customer who came back has
  // new orders under a new key): it is not theirs to erase again.
  const open = await subjectOpener(
    db,
    rows.map((r) => r.subject_id),
  );
  const opened = rows.map((r) => ({ id: r.id, name: open(r.subject_id, r.name) }));
  const live = opened.filter((r) => r.name !== ERASED_TEXT);
  return { names: [...new Set(live.map((r) => r.name))], orderIds: live.map((r) => r.id) };
}

/**
 * The subject's threads, by keys only: threads about their orders (as filed or as found), archived threads whose
 * decisions or refunds were about their orders (the ledger outlives the thread; a live thread about another order is
 * that order's customer's, whatever it paid), and their account changes.
 */
export async function listSubjectThreads({
  db,
  email,
  orderIds,
  subjectId,
}: {
  db: Queryable;
  email: string;
  orderIds: string[];
  /** The customer's subject id (lib/db/vault.ts): threads filed under it. */
  subjectId: string;
}): Promise<string[]> {
  const orders = sql`${sql.param(orderIds)}::text[]`;
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT id FROM threads WHERE customer_order = ANY(${orders})
      UNION SELECT id FROM threads WHERE subject_id = ${subjectId}
      UNION SELECT thread_id FROM decisions d WHERE order_id = ANY(${orders})
        AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = d.thread_id)
      UNION SELECT thread_id FROM refunds r WHERE order_id = ANY(${orders})
        AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = r.thread_id)
      UNION SELECT thread_id FROM account_changes WHERE lower(account_email) = ${email}
      ORDER BY 1`),
  );
  return rows.map((r) => r.id);
}

/**
 * Threads about no order at all whose ticket holds the address (a candidate list: the caller checks it as a whole
 * word). A thread about another customer's order is never one of them. A ticket in clear is matched by its text, a
 * sealed one by its words' blind index (lib/db/search-terms.ts), then opened.
 */
export async function listOrphanThreadsNaming({
  db,
  email,
}: {
  db: Queryable;
  email: string;
}): Promise<Array<{ id: string; text: string }>> {
  const pattern = `%${email.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const inClear = rowsOf<{ id: string; text: string }>(
    await db.execute(sql`SELECT id, concat_ws(' ', title, customer_message, ticket::text) AS text FROM threads
      WHERE customer_order IS NULL
        AND (customer_message ILIKE ${pattern} OR title ILIKE ${pattern} OR ticket::text ILIKE ${pattern})
      ORDER BY id`),
  );
  const digests = queryTerms(email.replace(/[^\p{L}\p{N}]+/gu, " ")) ?? [];
  const sealed = rowsOf<{ id: string; title: string; customer_message: string; ticket: unknown }>(
    await db.execute(sql`SELECT t.id, t.title, t.customer_message, t.ticket FROM threads t
      JOIN thread_search s ON s.thread_id = t.id
      WHERE t.customer_order IS NULL AND s.terms @> ${sql.param(digests)}::text[]
      ORDER BY t.id`),
  );
  const opened = await openThreads(
    db,
    sealed.map((r) => ({
      id: r.id,
      title: r.title,
      customerMessage: r.customer_message,
      ticket: r.ticket as Thread["ticket"],
    })),
  );
  return [
    ...inClear,
    ...opened.map((t) => ({
      id: t.id,
      text: [t.title, t.customerMessage, JSON.stringify(t.ticket)].join(" "),
    })),
  ].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Forget how these orders were found (their customer's name words and their subject, both blind indexes of the
 * customer): after erasure, neither a name nor an email leads to them. Returns the index rows and subjects removed.
 */
export async function forgetOrderIndex({
  db,
  orderIds,
}: {
  db: Queryable;
  orderIds: string[];
}): Promise<{ names: number; subjects: number }> {
  if (orderIds.length === 0) return { names: 0, subjects: 0 };
  const ids = sql`${sql.param(orderIds)}::text[]`;
  const [row] = rowsOf<{ names: number; subjects: number }>(
    await db.execute(sql`WITH names AS (DELETE FROM order_names WHERE order_id = ANY(${ids}) RETURNING 1),
        subjects AS (UPDATE orders SET subject_id = NULL WHERE id = ANY(${ids}) AND subject_id IS NOT NULL RETURNING 1)
      SELECT (SELECT count(*)::int FROM names) AS names, (SELECT count(*)::int FROM subjects) AS subjects`),
  );
  return { names: row?.names ?? 0, subjects: row?.subjects ?? 0 };
}

/** Forget the words of these threads' tickets (their blind index rows): erasure leaves nothing of them to match. */
export async function deleteThreadSearch({
  db,
  threadIds,
}: {
  db: Queryable;
  threadIds: string[];
}): Promise<number> {
  if (threadIds.length === 0) return 0;
  const gone = rowsOf<{ thread_id: string }>(
    await db.execute(sql`DELETE FROM thread_search WHERE thread_id = ANY(${sql.param(threadIds)}::text[])
      RETURNING thread_id`),
  );
  return gone.length;
}

/** The email effects of these threads (the simulated mail names its files by them). */
export async function listThreadEmailEffects({
  db,
  threadIds,
}: {
  db: Queryable;
  threadIds: string[];
}): Promise<string[]> {
  if (threadIds.length === 0) return [];
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT id FROM effects WHERE thread_id = ANY(${sql.param(threadIds)}::text[])
      AND kind = 'email' ORDER BY id`),
  );
  return rows.map((r) => r.id);
}

/** Which of these threads have a run queued or running (erasure waits for them to end). */
export async function listActiveThreads({
  db,
  threadIds,
}: {
  db: Queryable;
  threadIds: string[];
}): Promise<string[]> {
  if (threadIds.length === 0) return [];
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT DISTINCT thread_id AS id FROM runs
      WHERE thread_id = ANY(${sql.param(threadIds)}::text[]) AND status IN ('queued', 'running') ORDER BY 1`),
  );
  return rows.map((r) => r.id);
}

/**
 * The subject ids whose keys an erasure of the customer `subjectId` destroys: theirs, and the own subject (`t_<id>`)
 * of each of their threads that has one. Never another customer's.
 */
export async function listErasableSubjects({
  db,
  subjectId,
  threadIds,
}: {
  db: Queryable;
  subjectId: string;
  threadIds: string[];
}): Promise<string[]> {
  // A thread filed under a subject of its own (`t_<id>`): from its row, or — archived, its row gone, its key kept —
  // from the vault.
  const own = threadIds.map((id) => `t_${id}`);
  const rows = rowsOf<{ subject_id: string }>(
    await db.execute(sql`SELECT subject_id FROM threads
        WHERE id = ANY(${sql.param(threadIds)}::text[]) AND subject_id = 't_' || id
      UNION SELECT subject_id FROM vault.subject_keys WHERE subject_id = ANY(${sql.param(own)}::text[])`),
  );
  return [...new Set([subjectId, ...rows.map((r) => r.subject_id)])].sort();
}
