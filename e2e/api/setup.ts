import { join } from "node:path";
import { migrateDatabase } from "@/lib/db/migrate";
import { openPostgres } from "@/lib/db/open";
import { startEmbeddedServer } from "../support/embedded/server";
import { createTestDatabase } from "../support/pg";
import { startTestServer, type TestServer } from "../support/server";
import { sqlFor } from "./client";

/** A fresh Postgres database, migrated, with `count` extra large card orders (they always need an approval). */
export async function prepareDatabase(
  prefix: string,
  extraOrders: { prefix: string; count: number } = { prefix: "ORD-5", count: 0 },
  /** Another server's admin URL (default: the test Postgres), e.g. a failover cluster's stable address. */
  adminUrl?: string,
) {
  const db = await createTestDatabase(prefix, adminUrl ? { adminUrl } : {});
  const database = openPostgres(db.url, { max: 2 });
  await migrateDatabase(database, join(process.cwd(), "drizzle"));
  await database.close();
  const sql = sqlFor(db.url);
  if (extraOrders.count > 0) {
    await sql.rows(
      `INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
       SELECT $1 || lpad(g::text, 3, '0'), 'Customer ' || g, 'customer' || g || '@example.com', 50000, 'EUR',
         now() - interval '3 days', 'card', '[{"sku":"TV-1","name":"Television","quantity":1,"unitCents":50000}]'::jsonb,
         'delivered'
       FROM generate_series(0, $2 - 1) AS g`,
      [extraOrders.prefix, extraOrders.count],
    );
  }
  return { url: db.url, sql, drop: db.drop };
}

/** Stop servers, close the SQL helper and drop the database, whatever failed before. */
export async function cleanUp(
  servers: (TestServer | undefined)[],
  prepared?: Awaited<ReturnType<typeof prepareDatabase>>,
) {
  await Promise.all(servers.map((s) => s?.stop()));
  await prepared?.sql.end();
  await prepared?.drop();
}

export { startTestServer };

/**
 * One fresh database and one `next start` for a describe block: started before its tests, stopped and dropped after.
 * Read `prepared`, `server` and `url()` inside tests (they are set once `beforeAll` ran).
 */
export function useTestServer(
  prefix: string,
  extraOrders?: { prefix: string; count: number },
  env?: Record<string, string>,
) {
  const context = {
    prepared: undefined as unknown as Awaited<ReturnType<typeof prepareDatabase>>,
    server: undefined as TestServer | undefined,
    url: (path: string) => `${context.server?.url}${path}`,
  };
  beforeAll(async () => {
    context.prepared = await prepareDatabase(prefix, extraOrders);
    context.server = await startTestServer({ databaseUrl: context.prepared.url, ...(env ? { env } : {}) });
  });
  afterAll(async () => {
    await cleanUp([context.server], context.prepared);
  });
  return context;
}

export type Backend = "postgres" | "pglite";
export type Sql = Awaited<ReturnType<typeof prepareDatabase>>["sql"];

/** One server on a fresh database of `backend` (the embedded one is reached through the API only: no `sql`). */
export async function serverOn(
  backend: Backend,
  prefix: string,
  env: Record<string, string>,
): Promise<{ base: string; sql: Sql | null; stop: () => Promise<void> }> {
  if (backend === "pglite") {
    const embedded = await startEmbeddedServer(env);
    return { base: embedded.server.url, sql: null, stop: () => embedded.stop() };
  }
  const prepared = await prepareDatabase(prefix);
  const server = await startTestServer({ databaseUrl: prepared.url, env });
  return { base: server.url, sql: prepared.sql, stop: () => cleanUp([server], prepared) };
}

/** Poll `probe` every 25 ms until it gives something (not undefined or false), or fail naming `what`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
