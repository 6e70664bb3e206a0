import type { AppDb } from "./open";

/** A Drizzle transaction handle. */
export type Tx = Parameters<Parameters<AppDb["transaction"]>[0]>[0];
/** Anything queries can run on: the database or an open transaction. */
export type Queryable = AppDb | Tx;
