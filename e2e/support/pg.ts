import { randomBytes } from "node:crypto";
import pg from "pg";

/** Server-level connection used to create and drop per-run databases. Trust auth on loopback by default. */
export const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A fresh, empty Postgres database for one test file or run; `drop()` removes it. */
export async function createTestDatabase(
  prefix = "t",
  options: { icuLocale?: string } = {},
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `hitl_${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
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
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
