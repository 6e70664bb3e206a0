import "server-only";
import { join } from "node:path";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgliteDatabase } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import type { Database } from "./open";

/** Arbitrary but fixed: the advisory lock every process takes before migrating one Postgres database. */
const MIGRATION_LOCK_KEY = 7_311_842_001;

/**
 * Apply the migrations in `drizzle/` (the only migration history). On Postgres the work happens under a session
 * advisory lock on a dedicated connection, so two processes starting at once against an empty database migrate it
 * once: the second waits, then finds nothing left to apply.
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
  const client = await database.pool.connect();
  try {
    // A migration (and the wait for another process's) may take longer than a request's statement limit.
    await client.query("SET statement_timeout = 0");
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      await migratePg(drizzlePg(client), { migrationsFolder });
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await client.query("RESET statement_timeout").catch(() => {});
    client.release();
  }
}
