import { createTestDatabase } from "@/e2e/support/pg";
import { env } from "@/lib/platform/env";
import { openPostgres } from "./open";

/*
 * Idle connections (DATABASE_POOL_IDLE_MS): a burst that comes back after a lull longer than pg's own 10 s idle
 * timeout finds the connection it used, not a new backend (a fork, a login, cold catalog caches, every statement
 * prepared again). Told a short idle time, the pool does close it. Backend pids are what is compared, on both pools.
 */
describe("idle pooled connections", () => {
  let target: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    target = await createTestDatabase("poolidle");
  });
  afterAll(() => target?.drop());

  async function pidsAcrossLull(idleMs: number, lullMs: number) {
    const database = openPostgres(target.url, { max: 2, checkpointPoolMax: 2, idleMs });
    try {
      const pids = async () => {
        const [main] = await database.sql.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        const [checkpoint] = await database.checkpointSql.query<{ pid: number }>(
          "SELECT pg_backend_pid() AS pid",
        );
        return [main?.pid, checkpoint?.pid];
      };
      const before = await pids();
      await new Promise((r) => setTimeout(r, lullMs));
      return { before, after: await pids() };
    } finally {
      await database.close();
    }
  }

  it("the default keeps them open across a lull longer than pg's 10 s", { timeout: 30_000 }, async () => {
    expect(env.DATABASE_POOL_IDLE_MS).toBeGreaterThan(11_000);
    const { before, after } = await pidsAcrossLull(env.DATABASE_POOL_IDLE_MS, 11_000);
    expect(after).toEqual(before);
  });

  it("a short idle time closes them", async () => {
    const { before, after } = await pidsAcrossLull(1_000, 1_600);
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
  });
});
