import { openBackend } from "@/e2e/support/backends";
import { NOT_PERSONAL_COLUMNS, PERSONAL_COLUMNS } from "./erasure";

/*
 * Erasure knows where a customer's personal data can be only through its declared map: every text, JSON, byte and
 * array column of the migrated database is declared personal (and erased in the subject's rows) or not personal (with
 * why). A migration that adds a column without classifying it fails here.
 */
it("every column that can hold text is declared personal or not personal, and every declared column exists", async () => {
  const backend = await openBackend("pglite");
  try {
    const rows = await backend.database.sql.query<{ name: string }>(
      `SELECT c.table_schema || '.' || c.table_name || '.' || c.column_name AS name
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
       WHERE t.table_type = 'BASE TABLE' AND c.table_schema IN ('public', 'checkpoint', 'vault')
         AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea', 'tsvector', 'ARRAY')
         AND c.table_name NOT LIKE '\\_\\_drizzle%'
       ORDER BY 1`,
    );
    const inDatabase = rows.map((r) => r.name);
    const declared = [
      ...PERSONAL_COLUMNS.flatMap((t) => t.columns.map((c) => `${t.schema}.${t.table}.${c.column}`)),
      ...Object.entries(NOT_PERSONAL_COLUMNS).flatMap(([table, { columns }]) =>
        columns.map((c) => `${table}.${c}`),
      ),
    ];
    expect(declared.length, "a column is declared twice").toBe(new Set(declared).size);
    expect(
      inDatabase.filter((c) => !declared.includes(c)),
      "columns neither personal nor not",
    ).toEqual([]);
    expect(
      declared.filter((c) => !inDatabase.includes(c)),
      "declared columns the database lacks",
    ).toEqual([]);
  } finally {
    await backend.close();
  }
}, 120_000);
