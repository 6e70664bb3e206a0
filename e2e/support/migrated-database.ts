import { join } from "node:path";
import { migrateDatabase } from "@/lib/db/migrate";
import { type Database, openPostgres } from "@/lib/db/open";
import { createTestDatabase } from "./pg";

/**
 * A fresh Postgres database with every migration applied, opened through the app's own pool, for one test file:
 * created before its tests, closed and dropped after. Read `database` inside tests (it is set once `beforeAll` ran).
 */
export function withMigratedDatabase(prefix: string, options: { max?: number } = {}): { database: Database } {
  const context = { database: undefined as unknown as Database };
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const db = await createTestDatabase(prefix);
    drop = db.drop;
    context.database = openPostgres(db.url, { max: options.max ?? 2 });
    await migrateDatabase(context.database, join(process.cwd(), "drizzle"));
  });
  afterAll(async () => {
    await context.database?.close();
    await drop?.();
  });
  return context;
}
