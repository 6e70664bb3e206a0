import type { SQL } from "drizzle-orm";
import type { AppDb } from "./open";

/** A Drizzle transaction handle. */
export type Tx = Parameters<Parameters<AppDb["transaction"]>[0]>[0];
/** Anything queries can run on: the database or an open transaction. */
export type Queryable = AppDb | Tx;

/** A write not yet run (a query builder), to make in the same statement as another: a data-modifying CTE. */
export type Alongside = { getSQL(): SQL };

/**
 * `db`, or `db.with(...)` the writes in `alongside` as data-modifying CTEs of the statement built on it: one round
 * trip and one atomic statement. They run on the statement's snapshot: none may touch a row another one writes.
 */
export function withAlongside(db: Queryable, alongside: readonly Alongside[]) {
  if (alongside.length === 0) return db;
  return db.with(...alongside.map((write, i) => db.$with(`alongside_${i}`, {}).as(write.getSQL())));
}
