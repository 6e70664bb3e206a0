import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { authDir } from "../auth/users";

/** Run one statement on the suite server's database (the setup project wrote where it is). */
export async function onServerDb<T = unknown>(sql: string, params: unknown[] = []): Promise<T[]> {
  const url = readFileSync(join(authDir(), "database-url.txt"), "utf8").trim();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}
