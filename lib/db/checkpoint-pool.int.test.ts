import { sql } from "drizzle-orm";
import { createTestDatabase } from "@/e2e/support/pg";
import { migrateDatabase } from "./migrate";
import { openPostgres } from "./open";

/*
 * Checkpoints on a pool of their own (issue 31): with every checkpointer connection busy, page queries still get a
 * connection of the main pool at once; sharing one pool (CHECKPOINT_POOL_MAX=0), the same flood makes them wait behind
 * it. Order of completion is what is compared, not durations.
 */
describe("the checkpointer's own pool", () => {
  let target: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    target = await createTestDatabase("cppool");
    const database = openPostgres(target.url, { max: 2 });
    await migrateDatabase(database);
    await database.close();
  });
  afterAll(() => target?.drop());

  async function flood(checkpointPoolMax: number): Promise<string[]> {
    const database = openPostgres(target.url, { max: 2, checkpointPoolMax });
    const order: string[] = [];
    try {
      // Every checkpointer connection busy, and one more write waiting for a connection.
      const writes = Array.from({ length: 3 }, (_, i) =>
        database.checkpointSql.query("SELECT pg_sleep(0.6)").then(() => order.push(`checkpoint ${i}`)),
      );
      await new Promise((r) => setTimeout(r, 100));
      const page = database.db.execute(sql`SELECT count(*) FROM threads`).then(() => order.push("page"));
      await Promise.all([...writes, page]);
      return order;
    } finally {
      await database.close();
    }
  }

  it("a page query is answered while every checkpoint connection is busy", async () => {
    const order = await flood(2);
    expect(order[0]).toBe("page");
  });

  it("sharing one pool, the same flood holds the page query back", async () => {
    const order = await flood(0);
    expect(order.indexOf("page")).toBeGreaterThan(0);
  });
});
