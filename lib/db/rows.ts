import { getTableColumns, type InferSelectModel, type Table } from "drizzle-orm";

/** The rows of a raw `db.execute(sql…)` result: `pg` returns a QueryResult, PGlite a Results object, both with `rows`. */
export function rowsOf<T = Record<string, unknown>>(result: unknown): T[] {
  return (Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? [])) as T[];
}

/**
 * A raw row of `table` (column names as stored, driver values) as Drizzle's select would give it: each column of the
 * schema under its property name, through the column's own mapping (timestamps to `Date`, JSON parsed). For a
 * statement Drizzle's builders cannot write (an insert that selects from a data-modifying CTE) but whose row the
 * caller wants typed.
 */
export function tableRow<T extends Table>(table: T, row: Record<string, unknown>): InferSelectModel<T> {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = row[column.name];
    out[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return out as InferSelectModel<T>;
}
