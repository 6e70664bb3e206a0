import "server-only";
import { env } from "@/lib/platform/env";
import { migrateDatabase } from "./migrate";
import { type Database, openPglite, openPostgres } from "./open";

export type { AppDb, Database } from "./open";

const GLOBAL_KEY = Symbol.for("hitl-console.database");
type GlobalWithDb = typeof globalThis & { [GLOBAL_KEY]?: Promise<Database> };

/**
 * The process's one database, opened from the environment and migrated on first use. Cached on `globalThis` so dev
 * hot reload and the separately bundled `instrumentation.ts` share one pool / one PGlite instance.
 */
export function getDatabase(): Promise<Database> {
  const g = globalThis as GlobalWithDb;
  g[GLOBAL_KEY] ??= (async () => {
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
  })().catch((error) => {
    delete g[GLOBAL_KEY];
    throw error;
  });
  return g[GLOBAL_KEY];
}
