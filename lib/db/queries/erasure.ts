import "server-only";
import { sql } from "drizzle-orm";
import { getTableConfig } from "drizzle-orm/pg-core";
import { checkpoints } from "../schema";
import type { Queryable } from "../tx";

/*
 * The SQL of erasure (lib/runtime/erasure.ts). Patterns are case-insensitive Postgres regular expressions that match
 * the erased text literally; the rewriting itself is `audit_log_redact` (migration audit_chain_erasure), the same
 * function the audit trail's erasure uses.
 */

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/** The names the shop's orders give for a customer's email address (lower case). */
export async function findCustomerNames({ db, email }: { db: Queryable; email: string }): Promise<string[]> {
  const rows = rowsOf<{ name: string }>(
    await db.execute(
      sql`SELECT DISTINCT customer_name AS name FROM orders WHERE lower(customer_email) = ${email}`,
    ),
  );
  return rows.map((r) => r.name);
}

/** Threads whose events or decisions mention one of the JSON patterns, or that are about one of the email's orders. */
export async function listThreadsMentioning({
  db,
  jsonPatterns,
  email,
}: {
  db: Queryable;
  jsonPatterns: string[];
  email: string;
}): Promise<string[]> {
  const any = jsonPatterns.join("|");
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT thread_id AS id FROM events WHERE event::text ~* ${any}
      UNION SELECT thread_id FROM decisions WHERE payload::text ~* ${any}
      UNION SELECT t.id FROM threads t JOIN orders o ON o.id = t.order_ref WHERE lower(o.customer_email) = ${email}
      ORDER BY 1`),
  );
  return rows.map((r) => r.id);
}

export interface ErasableColumn {
  /** The table's Postgres schema: the application's (`public`) or the saver's (`checkpoint`). */
  schema: string;
  table: string;
  column: string;
  kind: "text" | "jsonb" | "bytea";
  /** How its rows name their thread (`thread_id`, or `id` for threads), if they do. */
  threadColumn: "thread_id" | "id" | null;
}

/**
 * Columns erasure never rewrites, whatever they hold: identifiers and keys, statuses, actions and answers, amounts and
 * currencies, and who did what (staff identities: `*_by`, labels). The ledger reads the same before and after.
 */
const PROTECTED_COLUMN =
  "^(id|key|kind|type|status|action|answer|role|currency|version|agent_id|agent_version)$|_id$|_ids$|_by$|_by_label$|_label$|_key$|_ref$|_cents$|_status$|^error_code$";

/**
 * Every column of the application's tables and the saver's (their own schema) that can hold a customer's text: text,
 * varchar, jsonb, and the saver's bytea values (in tables with a `type` column saying which are JSON). Not the audit trail (its own function), not
 * staff accounts and keys (auth_*, api_keys).
 */
export async function listErasableColumns({ db }: { db: Queryable }): Promise<ErasableColumn[]> {
  const rows = rowsOf<{
    schema: string;
    table: string;
    column: string;
    type: string;
    thread_column: string | null;
  }>(
    await db.execute(sql`SELECT c.table_schema AS schema, c.table_name AS table, c.column_name AS column, c.data_type AS type,
        CASE WHEN c.table_name = 'threads' THEN 'id'
          WHEN EXISTS (SELECT 1 FROM information_schema.columns k WHERE k.table_schema = c.table_schema
            AND k.table_name = c.table_name AND k.column_name = 'thread_id') THEN 'thread_id' END AS thread_column
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema IN (current_schema(), ${getTableConfig(checkpoints).schema ?? "public"}) AND t.table_type = 'BASE TABLE' AND c.is_generated = 'NEVER'
        AND c.data_type IN ('text', 'character varying', 'jsonb', 'bytea')
        AND c.table_name <> 'audit_log' AND c.table_name NOT LIKE 'auth\\_%' AND c.table_name <> 'api_keys'
        AND c.column_name !~ ${PROTECTED_COLUMN}
        AND (c.data_type <> 'bytea' OR EXISTS (SELECT 1 FROM information_schema.columns k
          WHERE k.table_schema = c.table_schema AND k.table_name = c.table_name AND k.column_name = 'type'))
      ORDER BY c.table_schema, c.table_name, c.ordinal_position`),
  );
  return rows.map((r) => ({
    schema: r.schema,
    table: r.table,
    column: r.column,
    kind: r.type === "jsonb" ? "jsonb" : r.type === "bytea" ? "bytea" : "text",
    threadColumn: r.thread_column === "id" || r.thread_column === "thread_id" ? r.thread_column : null,
  }));
}

/** Rewrite the patterns in one column of every row that holds one; returns the rows changed. */
export async function redactColumn({
  db,
  column,
  patterns,
  jsonPatterns,
  replacements,
  threadIds,
}: {
  db: Queryable;
  column: ErasableColumn;
  patterns: string[];
  jsonPatterns: string[];
  replacements: string[];
  /** Only rows of these threads (the column must have a thread column). */
  threadIds?: string[];
}): Promise<number> {
  const t = sql`${sql.identifier(column.schema)}.${sql.identifier(column.table)}`;
  const scope =
    threadIds && column.threadColumn
      ? sql` AND ${sql.identifier(column.threadColumn)} = ANY(${sql.param(threadIds)}::text[])`
      : sql``;
  const c = sql.identifier(column.column);
  const pats = sql`${sql.param(patterns)}::text[]`;
  const jpats = sql`${sql.param(jsonPatterns)}::text[]`;
  const reps = sql`${sql.param(replacements)}::text[]`;
  const statement =
    column.kind === "text"
      ? sql`UPDATE ${t} SET ${c} = audit_log_redact(${c}, ${pats}, ${reps}) WHERE ${c} ~* ${patterns.join("|")}${scope}`
      : column.kind === "jsonb"
        ? sql`UPDATE ${t} SET ${c} = audit_log_redact(${c}::text, ${jpats}, ${reps})::jsonb
            WHERE ${c}::text ~* ${jsonPatterns.join("|")}${scope}`
        : sql`UPDATE ${t} SET ${c} = convert_to(audit_log_redact(convert_from(${c}, 'UTF8'), ${jpats}, ${reps}), 'UTF8')
            WHERE type = 'json' AND convert_from(${c}, 'UTF8') ~* ${jsonPatterns.join("|")}${scope}`;
  const result = await db.execute(statement);
  return (
    (result as { rowCount?: number | null }).rowCount ??
    (result as { affectedRows?: number }).affectedRows ??
    0
  );
}

/** Whether `email` is a staff account's (erasure is for customers: staff identities are the ledger's). */
export async function isStaffEmail({ db, email }: { db: Queryable; email: string }): Promise<boolean> {
  const rows = rowsOf<{ n: number }>(
    await db.execute(sql`SELECT count(*)::int AS n FROM auth_users WHERE lower(email) = ${email}`),
  );
  return (rows[0]?.n ?? 0) > 0;
}
