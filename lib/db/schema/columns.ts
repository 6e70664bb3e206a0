import { customType } from "drizzle-orm/pg-core";

/**
 * Text compared by byte order whatever the database's default collation. Used for every column LangGraph sorts on
 * (checkpoint ids are time-ordered uuid6 strings, task paths and task ids order a superstep's writes): with a
 * locale collation, `ORDER BY` would disagree with LangGraph's code-point comparison.
 */
export const byteText = customType<{ data: string; driverData: string }>({
  dataType() {
    return 'text COLLATE "C"';
  },
});

/** Raw bytes: serialized channel values and writes. `pg` returns a Buffer, PGlite a Uint8Array. */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType() {
    return "bytea";
  },
});
