import { existsSync } from "node:fs";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { type FailoverCluster, failoverBinaries, startFailoverCluster } from "./failover-cluster";

/** Run one statement on a fresh connection; a cut socket rejects instead of raising an unhandled 'error'. */
async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on("error", () => {});
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The data folder a server reports, to check that stop() removed it. */
async function dataDirectory(url: string): Promise<string> {
  const rows = await query<{ d: string }>(url, "SELECT current_setting('data_directory') AS d");
  return rows[0]!.d;
}

describe.skipIf(failoverBinaries() === null)("failover cluster", () => {
  let cluster: FailoverCluster | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it("keeps every answered commit across two failovers, behind one stable address", async () => {
    const began = performance.now();
    cluster = await startFailoverCluster({ maxConnections: 30 });
    const c = cluster;
    const dataDir = await dataDirectory(c.primaryUrl());
    await c.createDatabase("shop");
    const url = c.url("shop");
    await query(url, "CREATE TABLE orders (id int PRIMARY KEY, note text NOT NULL)");
    await query(url, "INSERT INTO orders VALUES (1, 'before the first failover')");

    await c.killPrimary();
    await expect(query(url, "SELECT 1")).rejects.toThrow();

    const firstMs = await c.promote();
    console.log(`failover cluster: first promote writable after ${firstMs} ms`);
    expect(await query(url, "SELECT id, note FROM orders ORDER BY id")).toEqual([
      { id: 1, note: "before the first failover" },
    ]);
    await query(url, "INSERT INTO orders VALUES (2, 'after the first failover')");
    const [replicating] = await query<{ n: number }>(
      c.primaryUrl(),
      "SELECT count(*)::int AS n FROM pg_stat_replication",
    );
    expect(replicating?.n).toBe(0);

    await c.rebuildStandby();
    const [sync] = await query<{ sync_state: string }>(
      c.primaryUrl(),
      "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'",
    );
    expect(sync?.sync_state).toBe("sync");
    await query(url, "INSERT INTO orders VALUES (3, 'with the rebuilt standby')");

    await c.killPrimary();
    await expect(query(url, "SELECT 1")).rejects.toThrow();
    const secondMs = await c.promote();
    console.log(`failover cluster: second promote writable after ${secondMs} ms`);
    expect(await query<{ id: number }>(url, "SELECT id FROM orders ORDER BY id")).toEqual([
      { id: 1 },
      { id: 2 },
      { id: 3 },
    ]);
    await query(url, "INSERT INTO orders VALUES (4, 'after the second failover')");

    await c.stop();
    cluster = undefined;
    await expect(query(url, "SELECT 1")).rejects.toThrow();
    expect(existsSync(dataDir)).toBe(false);
    console.log(`failover cluster: whole run ${Math.round(performance.now() - began)} ms`);
  }, 60_000);
});
