/** The rows of a raw `db.execute(sql…)` result: `pg` returns a QueryResult, PGlite a Results object, both with `rows`. */
export function rowsOf<T = Record<string, unknown>>(result: unknown): T[] {
  return (Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? [])) as T[];
}
