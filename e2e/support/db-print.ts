/** Runs a query against the test's database and returns its rows (the suites' `sql.rows`). */
type Rows = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

/** The tables a thread has rows in, with the column that names it. */
const THREAD_TABLES = [
  ["threads", "id"],
  ["runs", "thread_id"],
  ["events", "thread_id"],
  ["decisions", "thread_id"],
  ["checkpoint.checkpoints", "thread_id"],
  ["checkpoint.checkpoint_blobs", "thread_id"],
  ["checkpoint.checkpoint_writes", "thread_id"],
  ["effects", "thread_id"],
] as const;

/** Every row of a thread in every table it has rows in, as text: equal before and after means untouched. */
export async function threadPrint(rows: Rows, threadId: string): Promise<string> {
  const parts: string[] = [];
  for (const [table, column] of THREAD_TABLES) {
    const [r] = await rows<{ p: string | null }>(
      `SELECT string_agg(x::text, '|' ORDER BY x::text) AS p FROM ${table} x WHERE ${column} = $1`,
      [threadId],
    );
    parts.push(`${table}:${r?.p ?? ""}`);
  }
  return parts.join("\n");
}

/** The tables (`schema.table: rows`) where any column holds `needle`, case-insensitively, bytea included. */
export async function tablesHolding(rows: Rows, needle: string): Promise<string[]> {
  const found: string[] = [];
  const tables = await rows<{ schema: string; table: string; bytea: string[] | null }>(
    `SELECT t.table_schema::text AS schema, t.table_name::text AS table,
       array_agg(c.column_name::text) FILTER (WHERE c.data_type = 'bytea') AS bytea
     FROM information_schema.tables t
     JOIN information_schema.columns c ON c.table_schema = t.table_schema AND c.table_name = t.table_name
     WHERE t.table_type = 'BASE TABLE' AND t.table_schema NOT IN ('pg_catalog', 'information_schema')
     GROUP BY 1, 2`,
  );
  if (tables.length < 15) throw new Error(`only ${tables.length} tables: is this the app's database?`);
  for (const t of tables) {
    const bytea = (t.bytea ?? []).map((c) => ` OR encode(x."${c}", 'escape') ILIKE $1`).join("");
    const [hit] = await rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${t.schema}"."${t.table}" x WHERE x::text ILIKE $1${bytea}`,
      [`%${needle}%`],
    );
    if ((hit?.n ?? 0) > 0) found.push(`${t.schema}.${t.table}: ${hit?.n}`);
  }
  return found;
}
