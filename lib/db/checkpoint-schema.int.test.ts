import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "@langchain/langgraph";
import { uuid6 } from "@langchain/langgraph-checkpoint";
import { buildApprovalGraph } from "@/e2e/support/approval-graph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { migrateDatabase } from "./migrate";
import type { SqlClient } from "./sql-client";

/*
 * The saver's tables live in the Postgres schema `checkpoint` (migration 0033_checkpoint_schema). A database of the
 * release before moves over with its checkpoints as they are, and that release's servers — still running while a
 * rolling deploy replaces them — keep working through views of the old names in `public`. The previous release's
 * saver statements are this release's with the table names unqualified (the move changed nothing else in them), so
 * that saver is this one with `"checkpoint".` taken out of every statement it sends.
 */

const MOVE = "0033_checkpoint_schema";

/** A copy of the migrations folder up to (not including) `tag`: the release before it. */
function migrationsBefore(tag: string): { folder: string; drop(): void } {
  const folder = mkdtempSync(join(tmpdir(), "hitl-migrations-"));
  cpSync(join(process.cwd(), "drizzle"), folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((e) => e.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag}`);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalPath, JSON.stringify(journal));
  return { folder, drop: () => rmSync(folder, { recursive: true, force: true }) };
}

/** The previous release's statements: this release's, unqualified. Counts what it sent. */
function previousRelease(sql: SqlClient): SqlClient & { sent: number } {
  const client = {
    sent: 0,
    query<R>(text: string, params?: readonly unknown[], name?: string): Promise<R[]> {
      // It knows no data keys (the vault came later): its threads are stored as they were.
      if (text.includes("vault.")) return Promise.resolve([]);
      const unqualified = text.replaceAll('"checkpoint".', "");
      if (unqualified !== text) client.sent += 1;
      // A named statement is prepared once per connection under its name: the old text gets a name of its own.
      return sql.query<R>(unqualified, params, name ? `old_${name}` : undefined);
    },
  };
  return client;
}

const backends: Backend[] = ["postgres", "pglite"];

describe.each(backends)("checkpoints in a schema of their own, on %s", (kind) => {
  it("a database of the release before moves over with its checkpoints, and that release keeps working through the old names", async () => {
    const before = migrationsBefore(MOVE);
    const backend = await openBackend(kind, { migrationsFolder: before.folder });
    try {
      const { sql } = backend.database;
      const old = previousRelease(sql);
      const oldSaver = new DrizzleCheckpointSaver(old);
      const thread = { configurable: { thread_id: `t-${uuid6(1)}` } };

      // Under the release before: a thread paused at its approval, in public's tables.
      const oldGraph = buildApprovalGraph(oldSaver);
      await oldGraph.invoke({ order: "A-1" }, thread);
      const paused = await oldGraph.getState(thread);
      expect(paused.tasks.flatMap((t) => t.interrupts)).toHaveLength(1);
      const [inPublic] = await sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM public.checkpoints WHERE thread_id = $1",
        [thread.configurable.thread_id],
      );
      expect(inPublic?.n).toBeGreaterThan(0);

      // The deploy's migration.
      await migrateDatabase(backend.database);
      const where = await sql.query<{ schema: string; name: string; type: string }>(
        `SELECT table_schema AS schema, table_name AS name, table_type AS type FROM information_schema.tables
         WHERE table_name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes') ORDER BY 1, 2`,
      );
      expect(where).toEqual([
        { schema: "checkpoint", name: "checkpoint_blobs", type: "BASE TABLE" },
        { schema: "checkpoint", name: "checkpoint_writes", type: "BASE TABLE" },
        { schema: "checkpoint", name: "checkpoints", type: "BASE TABLE" },
        { schema: "public", name: "checkpoint_blobs", type: "VIEW" },
        { schema: "public", name: "checkpoint_writes", type: "VIEW" },
        { schema: "public", name: "checkpoints", type: "VIEW" },
      ]);

      // This release reads the moved thread as it was and resumes it.
      const saver = new DrizzleCheckpointSaver(sql);
      const graph = buildApprovalGraph(saver);
      const moved = await graph.getState(thread);
      expect(moved.config.configurable?.checkpoint_id).toBe(paused.config.configurable?.checkpoint_id);
      expect(moved.values).toEqual(paused.values);

      // A server of the release before, still running, resumes a second thread and forks the first — every write
      // and read through the old names — and what it wrote is in the checkpoint schema, read back by this release.
      const sentBefore = old.sent;
      const second = { configurable: { thread_id: `t-${uuid6(2)}` } };
      await oldGraph.invoke({ order: "B-2" }, second);
      await oldGraph.invoke(new Command({ resume: "approved" }), second);
      const fork = await oldGraph.updateState(paused.config, { note: "old server" });
      await oldGraph.invoke(new Command({ resume: "rejected" }), fork);
      expect(old.sent - sentBefore).toBeGreaterThan(10);
      expect((await graph.getState(second)).values.decision).toBe("approved");
      expect((await graph.getState(thread)).values).toMatchObject({
        decision: "rejected",
        note: "old server",
      });
      const history = [];
      for await (const s of oldGraph.getStateHistory(thread))
        history.push(s.config.configurable?.checkpoint_id);
      const ours = [];
      for await (const s of graph.getStateHistory(thread)) ours.push(s.config.configurable?.checkpoint_id);
      expect(history).toEqual(ours);
      const [inSchema] = await sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM checkpoint.checkpoints WHERE thread_id = $1",
        [second.configurable.thread_id],
      );
      expect(inSchema?.n).toBeGreaterThan(0);

      // And the old server's thread deletion empties the moved tables.
      await oldSaver.deleteThread(second.configurable.thread_id);
      const [left] = await sql.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM checkpoint.checkpoints WHERE thread_id = $1)
           + (SELECT count(*) FROM checkpoint.checkpoint_blobs WHERE thread_id = $1)
           + (SELECT count(*) FROM checkpoint.checkpoint_writes WHERE thread_id = $1)::int AS n`,
        [second.configurable.thread_id],
      );
      expect(Number(left?.n)).toBe(0);
    } finally {
      await backend.close();
      before.drop();
    }
  }, 120_000);
});
