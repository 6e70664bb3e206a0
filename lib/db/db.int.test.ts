import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApprovalGraph } from "@/e2e/support/approval-graph";
import { createTestDatabase } from "@/e2e/support/pg";
import { runTsx } from "@/e2e/support/spawn";
import { DrizzleCheckpointSaver } from "../checkpoint/saver";
import { migrateDatabase } from "./migrate";
import { openPglite, openPostgres } from "./open";

async function tableCounts(sql: { query<R>(text: string): Promise<R[]> }) {
  const [row] = await sql.query<{ migrations: number; tables: number }>(
    `SELECT (SELECT count(*) FROM drizzle.__drizzle_migrations)::int AS migrations,
      (SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public')::int AS tables`,
  );
  return row;
}

describe("database layer on Postgres", () => {
  it("migrates once when two processes start against one empty database, and re-running changes nothing", async () => {
    const db = await createTestDatabase("mig");
    try {
      const outputs = await Promise.all([
        runTsx("e2e/support/fixtures/migrator.ts", [db.url]),
        runTsx("e2e/support/fixtures/migrator.ts", [db.url]),
      ]);
      expect(outputs.map((o) => o.trim())).toEqual(["migrated", "migrated"]);
      const database = openPostgres(db.url, { max: 2 });
      try {
        const before = await tableCounts(database.sql);
        await migrateDatabase(database);
        await migrateDatabase(database);
        expect(await tableCounts(database.sql)).toEqual(before);
        expect(before?.tables).toBeGreaterThanOrEqual(3);
      } finally {
        await database.close();
      }
    } finally {
      await db.drop();
    }
  });

  it("lets two processes write to different threads at once", async () => {
    const db = await createTestDatabase("mp");
    const database = openPostgres(db.url, { max: 4 });
    try {
      await migrateDatabase(database);
      const [a, b] = await Promise.all([
        runTsx("e2e/support/fixtures/writer.ts", [db.url, "proc-a", "15"]),
        runTsx("e2e/support/fixtures/writer.ts", [db.url, "proc-b", "15"]),
      ]);
      const done = [...JSON.parse(a ?? "{}").done, ...JSON.parse(b ?? "{}").done] as string[];
      expect(done).toHaveLength(30);
      const graph = buildApprovalGraph(new DrizzleCheckpointSaver(database.sql));
      for (const threadId of done) {
        const state = await graph.getState({ configurable: { thread_id: threadId } });
        expect(state.values.decision).toBe(`ok-${threadId}`);
        expect(state.values.log).toHaveLength(4);
        expect(state.next).toEqual([]);
      }
    } finally {
      await database.close();
      await db.drop();
    }
  });
});

describe("database layer on PGlite", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "hitl-pglite-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("migrates idempotently and keeps data across reopen", async () => {
    const dataDir = join(dir, "data");
    const first = await openPglite(dataDir);
    await migrateDatabase(first);
    await migrateDatabase(first);
    const counts = await tableCounts(first.sql);
    const graph = buildApprovalGraph(new DrizzleCheckpointSaver(first.sql));
    await graph.invoke({ order: "P-1" }, { configurable: { thread_id: "p1" } });
    await first.close();

    const second = await openPglite(dataDir);
    try {
      await migrateDatabase(second);
      expect(await tableCounts(second.sql)).toEqual(counts);
      const state = await buildApprovalGraph(new DrizzleCheckpointSaver(second.sql)).getState({
        configurable: { thread_id: "p1" },
      });
      expect(state.tasks.flatMap((t) => t.interrupts)).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it("refuses a second process on the same data directory with a clear error", async () => {
    const dataDir = join(dir, "locked");
    const open = await openPglite(dataDir);
    try {
      await expect(
        runTsx("-e", [`import("./lib/db/open.ts").then(m => m.openPglite(${JSON.stringify(dataDir)}))`]),
      ).rejects.toThrow(/in use by process \d+/);
    } finally {
      await open.close();
    }
  });
});
