import type { SqlClient } from "@/lib/db/sql-client";

/** Counts statements sent through a client: the figure the saver benchmark reports per thread. */
export class CountingSqlClient implements SqlClient {
  statements = 0;
  constructor(private readonly inner: SqlClient) {}
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], name?: string): Promise<R[]> {
    this.statements += 1;
    return this.inner.query<R>(text, params, name);
  }
}
