/**
 * `npm run db:migrate`: apply pending migrations from drizzle/ to DATABASE_URL, or to the embedded database when it is
 * unset. Safe to run while servers start: migrations take a transaction advisory lock on Postgres.
 */
import { migrateDatabase } from "@/lib/db/migrate";
import { openPglite, openPostgres } from "@/lib/db/open";
import { env } from "@/lib/platform/env";

const database = env.DATABASE_URL
  ? openPostgres(env.DATABASE_URL, { max: 2, pooled: env.DATABASE_POOLER === "transaction" })
  : await openPglite(env.PGLITE_DATA_DIR);
try {
  await migrateDatabase(database);
  console.log(`migrations applied (${database.kind})`);
} finally {
  await database.close();
}
