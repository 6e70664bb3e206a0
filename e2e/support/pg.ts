import { randomBytes } from "node:crypto";
import pg from "pg";

/** Server-level connection used to create and drop per-run databases. Trust auth on loopback by default. */
export const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A fresh, empty Postgres database for one test file or run; `drop()` removes it. */
export async function createTestDatabase(
  prefix = "t",
  options: {
    icuLocale?: string /** Another server's admin URL (default: the test Postgres). */;
    adminUrl?: string;
  } = {},
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `hitl_${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const adminUrl = options.adminUrl ?? ADMIN_URL;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // A locale-aware default collation (ICU en-US, where "a" < "B") shows that byte order does not come from it.
    const locale = options.icuLocale
      ? ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale.replace(/'/g, "")}' LOCALE 'C.UTF-8'`
      : "";
    await admin.query(`CREATE DATABASE "${name}"${locale}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await waitForNoConnections(c, name);
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * `pool.end()` resolves once its clients have sent Terminate, not once the server has closed them. A forced DROP
 * that lands in between terminates a connection its client is still closing, and that client then raises an
 * unhandled "terminating connection due to administrator command". Wait (bounded) until the database is idle.
 */
async function waitForNoConnections(admin: pg.Client, name: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1",
      [name],
    );
    if (rows[0]?.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
