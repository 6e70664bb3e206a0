import "server-only";
import { join } from "node:path";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgliteDatabase } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import type { Database } from "./open";

/** Arbitrary but fixed: the advisory lock every process takes before migrating one Postgres database. */
const MIGRATION_LOCK_KEY = 7_311_842_001;

/**
 * Apply the migrations in `drizzle/` (the only migration history). On Postgres two processes starting at once against
 * an empty database migrate it once: each first takes a transaction advisory lock on a connection of its own, whose
 * transaction stays open while the migrations run on another (the second process waits, then finds nothing left to
 * apply). No session-level lock or setting is used, so this works through a transaction pooler too; directly
 * connected, the migration's connection lifts the pool's statement limit for its own statements.
 */
export async function migrateDatabase(
  database: Database,
  migrationsFolder = join(process.cwd(), "drizzle"),
): Promise<void> {
  if (database.kind === "pglite") {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder });
    return;
  }
  if (!database.pool) throw new Error("Postgres database without a pool");
  const { connectionString } = database.pool.options as { connectionString?: string };
  const lock = new pg.Client({ connectionString });
  lock.on("error", () => {});
  await lock.connect();
  try {
    await lock.query("BEGIN");
    await lock.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    const client = await database.pool.connect();
    // A migration may take longer than a request's statement limit (a start-up setting of a direct pool's connections;
    // behind a pooler there is none, and a session setting would outlive this connection's turn).
    const limited = !database.pooled;
    try {
      if (limited) await client.query("SET statement_timeout = 0");
      await migratePg(drizzlePg(client), { migrationsFolder });
    } finally {
      if (limited) await client.query("RESET statement_timeout").catch(() => {});
      client.release();
    }
    await lock.query("COMMIT");
  } finally {
    await lock.end().catch(() => {});
  }
}
