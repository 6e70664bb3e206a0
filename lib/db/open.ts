import "server-only";
import { setFlagsFromString } from "node:v8";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import pg from "pg";
import { ensurePrivateDir, tightenTree, withPrivateUmask } from "@/lib/platform/private-files";
import { parseByteaArray } from "./bytea-array";
import { createGate, type Gate, type GateOptions } from "./pglite-gate";
import { initializeInChild } from "./pglite-init";
import { acquireDataDirLock } from "./pglite-lock";
import { gatedPglite, preparedPglite } from "./pglite-prepared";
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
  /**
   * The checkpointer's connection: on Postgres a pool of its own (`openPostgres`'s `checkpointPoolMax`), so checkpoint
   * writes never take the connections requests wait for; otherwise `sql`.
   */
  checkpointSql: SqlClient;
  /** The `pg` pool when `kind` is "postgres". */
  pool?: pg.Pool;
  /** The checkpointer's own pool, when it has one. */
  checkpointPool?: pg.Pool;
  /** Postgres through a transaction pooler (`openPostgres`'s `pooled`): nothing may outlive a transaction. */
  pooled?: boolean;
  /** PGlite: the one queue in front of its single connection (health reads how many wait). */
  gate?: Gate;
  /** PGlite: hear NOTIFYs on `channel` in-process (the process is the database's only client). */
  listen?(channel: string, onNotify: () => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * Open real Postgres through a `pg` pool. `waitMs` bounds the wait for a pooled connection and `statementTimeoutMs`
 * each statement (`statement_timeout`); unset, neither is bounded (scripts, migrations, tests' own pools).
 */
export function openPostgres(
  url: string,
  options: {
    max?: number;
    waitMs?: number;
    statementTimeoutMs?: number;
    /**
     * `url` is a pooler in transaction mode: a server connection serves one transaction, then another client. Nothing
     * may outlive a transaction on it — no named prepared statements, no start-up settings (statement_timeout is the
     * role's to set there).
     */
    pooled?: boolean;
    /** Size of the checkpointer's own pool; 0 or absent: the checkpointer shares the main pool. */
    checkpointPoolMax?: number;
    /** How long an idle connection stays open (pg's default, 10 s, when absent). */
    idleMs?: number;
  } = {},
): Database {
  const pooled = options.pooled ?? false;
  const pool = openPool(url, options.max ?? 20, options, pooled);
  const sql = sqlOf(pool, pooled);
  const checkpointPool = options.checkpointPoolMax
    ? openPool(url, options.checkpointPoolMax, options, pooled)
    : undefined;
  return {
    kind: "postgres",
    db: drizzlePg(pool, { schema }) as unknown as AppDb,
    sql,
    checkpointSql: checkpointPool ? sqlOf(checkpointPool, pooled) : sql,
    pool,
    checkpointPool,
    pooled,
    close: async () => {
      await Promise.all([pool.end(), checkpointPool?.end()]);
    },
  };
}

function openPool(
  url: string,
  max: number,
  options: { waitMs?: number; statementTimeoutMs?: number; idleMs?: number },
  pooled: boolean,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    ...(options.idleMs ? { idleTimeoutMillis: options.idleMs } : {}),
    ...(options.waitMs ? { connectionTimeoutMillis: options.waitMs } : {}),
    ...(options.statementTimeoutMs && !pooled ? { statement_timeout: options.statementTimeoutMs } : {}),
    // Directly connected, every parameterized statement is prepared once per connection (hot queries skip parse and
    // analysis); behind a transaction pooler each is parsed as it comes (unnamed), as the pooler requires.
    Client: pooled ? pg.Client : PreparingClient,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === BYTEA_ARRAY_OID && format !== "binary"
          ? parseByteaArray
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener it kills the process.
  pool.on("error", (error) => console.error("[db] idle client error:", error.message));
  return pool;
}

function sqlOf(pool: pg.Pool, pooled: boolean): SqlClient {
  return {
    async query(text, params, name) {
      const result = await pool.query(
        name && !pooled ? { name, text, values: params as unknown[] } : { text, values: params as unknown[] },
      );
      return result.rows;
    },
  };
}

const BYTEA_OID = 17;

/** bytea's text form (`\\x` + hex) decoded natively. */
function parseBytea(text: string): Buffer {
  return Buffer.from(text.slice(2), "hex");
}

/**
 * PGlite's own bytea codecs work a byte at a time in JavaScript (a hex string built from an array of per-byte strings;
 * `parseInt` per byte on the way back): on checkpoint-sized values they cost more than the query. A bytea parameter
 * goes in binary instead (PGlite sends a Uint8Array parameter as is), and results decode through Buffer's hex.
 */
const PGLITE_OPTIONS = {
  // Its pages are in the OS page cache anyway (PGlite reads and writes real files): a large buffer pool inside the
  // WASM heap only doubles them in this process's resident memory. 16 MB holds the hot pages of the queues.
  postgresqlconf: ["shared_buffers = 16MB"],
  serializers: { [BYTEA_OID]: (value: unknown) => value },
  parsers: { [BYTEA_OID]: parseBytea, [BYTEA_ARRAY_OID]: parseByteaArray },
} as unknown as PGliteOptions;

/**
 * V8 settings for a process that holds its database: set before PGlite's module compiles (they change only what V8
 * does from then on), and only when the embedded database is opened.
 * - Baseline WASM code only (`--liftoff-only`). V8 compiles PGlite's Postgres with Liftoff, then recompiles its hot
 *   functions with TurboFan on background threads, whose working memory glibc keeps in per-thread arenas: ~60 MB
 *   resident for no throughput (bench:embedded ran as fast without it; the recompiling costs CPU too).
 * - Old space grown by at most 30 % of what a full GC leaves live (`--heap-growing-percent`; V8 otherwise picks up to
 *   4× for a busy process). PGlite's protocol buffers and decoded rows are promoted and die soon after, so the default
 *   let ~150 MB of them pile up between full collections; with 30 % the embedded server used 423 instead of 620 MB
 *   after 210 tickets, at the same CPU per ticket.
 * Other WASM in the process (undici's HTTP parser) is small; the heap setting applies to the whole process, whose
 * live set is small, as this server's is.
 */
function tuneV8ForEmbeddedDatabase(): void {
  setFlagsFromString("--liftoff-only");
  setFlagsFromString("--heap-growing-percent=30");
}

/**
 * Open embedded PGlite: a directory on disk, or `memory://` for a throwaway database. On disk the data directory
 * is private to this user: 0700, its files 0600 (PGlite would create them 0666 minus the umask, i.e. world-readable
 * under the usual 022). Files are created under umask 077, and everything already there is tightened at each open;
 * a file PGlite adds later sits inside the 0700 directory, out of other users' reach, and is tightened next open.
 */
export async function openPglite(dataDir: string, options: GateOptions = {}): Promise<Database> {
  const inMemory = dataDir.startsWith("memory://");
  const release = inMemory ? () => {} : acquireDataDirLock(dataDir);
  try {
    if (!inMemory) {
      ensurePrivateDir(dataDir);
      tightenTree(dataDir);
      await initializeInChild(dataDir);
    }
    tuneV8ForEmbeddedDatabase();
    const client = inMemory
      ? await PGlite.create(PGLITE_OPTIONS)
      : await withPrivateUmask(() => PGlite.create(dataDir, PGLITE_OPTIONS));
    if (!inMemory) tightenTree(dataDir);
    // Parameterized statements prepared once (pglite-prepared.ts); PGlite as is if this version lacks what it needs.
    // Every wait for its one connection is bounded, and a statement that waits on its own transaction fails fast.
    const gate = createGate(options);
    const prepared = preparedPglite(client, gate);
    const gated = prepared ? prepared.client : gatedPglite(client, gate);
    const sql: SqlClient = {
      async query(text, params) {
        const result = prepared
          ? await prepared.query(text, params as unknown[])
          : await gated.query(text, params as unknown[]);
        return result.rows as never[];
      },
    };
    return {
      kind: "pglite",
      db: drizzlePglite({ client: gated, schema }) as unknown as AppDb,
      sql,
      // One connection: the checkpointer's queue is everyone's (the gate orders them).
      checkpointSql: sql,
      gate,
      async listen(channel, onNotify) {
        await client.listen(channel, onNotify);
      },
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
