import "server-only";
import { env } from "@/lib/platform/env";
import { clearSingleton, singleton } from "@/lib/platform/singleton";
import { migrateDatabase } from "./migrate";
import { type Database, openPglite, openPostgres } from "./open";

export type { AppDb, Database } from "./open";

const DATABASE = "database";

/**
 * The process's one database, opened from the environment and migrated on first use. A process-wide `singleton`, so
 * dev hot reload and the separately bundled `instrumentation.ts` share one pool / one PGlite instance; a failed open
 * is forgotten, and the next call tries again.
 */
export function getDatabase(): Promise<Database> {
  return singleton(DATABASE, () =>
    openDatabase().catch((error) => {
      clearSingleton(DATABASE);
      throw error;
    }),
  );
}

async function openDatabase(): Promise<Database> {
  const database = env.DATABASE_URL
    ? openPostgres(env.DATABASE_URL, {
        max: env.DATABASE_POOL_MAX,
        waitMs: env.DATABASE_WAIT_MS,
        statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
        pooled: env.DATABASE_POOLER === "transaction",
        checkpointPoolMax: env.CHECKPOINT_POOL_MAX,
        idleMs: env.DATABASE_POOL_IDLE_MS,
      })
    : await openPglite(env.PGLITE_DATA_DIR, { waitMs: env.DATABASE_WAIT_MS });
  try {
    if (env.MIGRATE_ON_START) await migrateDatabase(database);
  } catch (error) {
    // The next call opens a new one: close this one, or every retry during an outage leaves a pool behind.
    await database.close().catch(() => {});
    throw error;
  }
  return database;
}
