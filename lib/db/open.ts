import "server-only";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import pg from "pg";
import { ensurePrivateDir, tightenTree, withPrivateUmask } from "@/lib/private-files";
import { parseByteaArray } from "./bytea-array";
import { acquireDataDirLock } from "./pglite-lock";
import { PreparingClient } from "./prepared-client";

const BYTEA_ARRAY_OID = 1001;

import * as schema from "./schema";
import type { SqlClient } from "./sql-client";

export type AppDb = PgDatabase<PgQueryResultHKT, typeof schema>;

/** One open database: the Drizzle handle for app queries and the raw client the checkpointer uses. */
export interface Database {
  kind: "postgres" | "pglite";
  db: AppDb;
  sql: SqlClient;
  /** The `pg` pool when `kind` is "postgres" (LISTEN/NOTIFY and advisory locks need a dedicated client). */
  pool?: pg.Pool;
  close(): Promise<void>;
}

/** Open real Postgres through a `pg` pool. */
export function openPostgres(url: string, options: { max?: number } = {}): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    // Every parameterized statement is prepared once per connection (hot queries skip parse and analysis).
    Client: PreparingClient,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === BYTEA_ARRAY_OID && format !== "binary"
          ? parseByteaArray
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener it kills the process.
  pool.on("error", (error) => console.error("[db] idle client error:", error.message));
  const sql: SqlClient = {
    async query(text, params, name) {
      const result = await pool.query(
        name ? { name, text, values: params as unknown[] } : { text, values: params as unknown[] },
      );
      return result.rows;
    },
  };
  return {
    kind: "postgres",
    db: drizzlePg(pool, { schema }) as unknown as AppDb,
    sql,
    pool,
    close: () => pool.end(),
  };
}

/**
 * Open embedded PGlite: a directory on disk, or `memory://` for a throwaway database. On disk the data directory
 * is private to this user: 0700, its files 0600 (PGlite would create them 0666 minus the umask, i.e. world-readable
 * under the usual 022). Files are created under umask 077, and everything already there is tightened at each open;
 * a file PGlite adds later sits inside the 0700 directory, out of other users' reach, and is tightened next open.
 */
export async function openPglite(dataDir: string): Promise<Database> {
  const inMemory = dataDir.startsWith("memory://");
  const release = inMemory ? () => {} : acquireDataDirLock(dataDir);
  try {
    if (!inMemory) {
      ensurePrivateDir(dataDir);
      tightenTree(dataDir);
    }
    const client = inMemory ? await PGlite.create() : await withPrivateUmask(() => PGlite.create(dataDir));
    if (!inMemory) tightenTree(dataDir);
    const sql: SqlClient = {
      async query(text, params) {
        const result = await client.query(text, params as unknown[]);
        return result.rows as never[];
      },
    };
    return {
      kind: "pglite",
      db: drizzlePglite(client, { schema }) as unknown as AppDb,
      sql,
      async close() {
        try {
          await client.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
