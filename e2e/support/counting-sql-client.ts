import type { SqlClient } from "@/lib/db/sql-client";

/** Counts statements sent through a client: the figure the saver benchmark reports per thread. */
export class CountingSqlClient implements SqlClient {
  statements = 0;
  /** Statements per prepared-statement name (unnamed ones are not counted here). */
  readonly byName: Record<string, number> = {};
  constructor(private readonly inner: SqlClient) {}
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], name?: string): Promise<R[]> {
    this.statements += 1;
    if (name) this.byName[name] = (this.byName[name] ?? 0) + 1;
    return this.inner.query<R>(text, params, name);
  }
}
