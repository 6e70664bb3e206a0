import "server-only";
import type { SqlClient } from "@/lib/db/sql-client";
import { inSpan } from "./tracing";

/** The saver call each of its named statements serves (one statement per call: `lib/checkpoint/saver.ts`). */
const SAVER_CALLS: Record<string, string> = {
  cp_get_by_id: "getTuple",
  cp_get_latest: "getTuple",
  cp_put: "put",
  cp_upsert_writes: "putWrites",
  cp_insert_writes: "putWrites",
  cp_delete_thread: "deleteThread",
};

/**
 * The checkpointer's SQL client with a span per saver call (`saver put`, `saver getTuple`…) inside the active trace.
 * Outside a trace it adds nothing but one context lookup. Wrapping the client keeps the saver itself unaware.
 */
export function tracedSaverSql(sql: SqlClient): SqlClient {
  return {
    query<R>(text: string, params?: readonly unknown[], name?: string): Promise<R[]> {
      const call = (name && SAVER_CALLS[name]) ?? "list";
      return inSpan(`saver ${call}`, { "db.operation.name": call }, () => sql.query<R>(text, params, name));
    },
  };
}
