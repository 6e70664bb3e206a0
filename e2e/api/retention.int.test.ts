import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgres } from "@/lib/db/open";
import { openThreadJson } from "@/lib/db/vault";
import { eraseCustomer } from "@/lib/runtime/retention/erasure";
import { applyRetention, defaultRetentionPolicy } from "@/lib/runtime/retention/retention-policy";
import { makeTemplates, runStorageBench, waitForEffects } from "../bench/storage-core";
import { authedFetch } from "../support/auth";
import { threadPrint as printThread, tablesHolding } from "../support/db-print";
import { runBody } from "./client";
import { orderCustomer } from "./sealed";
import { useTestServer } from "./setup";
import { readSse, type SseEvent } from "./sse";

/*
 * Retention and erasure against `next start` on a fresh Postgres database, with real refund threads made over HTTP:
 * the storage benchmark in small, history truncation through the admin API (every kept history page still renders),
 * reconnect after event compaction, erasure of a customer (no row of any table holds their name or email, the audit
 * trail still verifies, their thread still renders), and archiving (decisions and audit rows stay).
 */

describe("retention and erasure", () => {
  const KEEP = 3;
  const ctx = useTestServer("retention", undefined, {
    RETENTION_KEEP_CHECKPOINTS: String(KEEP),
    RETENTION_TRUNCATE_AFTER_HOURS: "0",
    RETENTION_COMPACT_AFTER_MINUTES: "0",
    RETENTION_ARCHIVE_AFTER_DAYS: "0",
    // The storage bench's clones are dated up to 90 days back, so their decisions are long overdue: the deadline
    // sweeper would escalate them (a change to a pending thread that is not retention's). It stays idle here.
    DEADLINE_SWEEP_MS: "3600000",
  });
  const { url } = ctx;
  let templates: { finished: string[]; pending: string[] };
  let database: ReturnType<typeof openPostgres>;
  const rows = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    ctx.prepared.sql.rows<T>(text, params);

  const threadPrint = (threadId: string) => printThread(rows, threadId);

  async function applyOverHttp(body: unknown) {
    const res = await authedFetch(
      url("/api/retention/apply"),
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      "admin",
    );
    expect(res.status).toBe(200);
    return (await res.json()) as { steps: { step: string; threadsChanged: number; eventsDeleted: number }[] };
  }

  beforeAll(async () => {
    templates = await makeTemplates(url(""));
    database = openPostgres(ctx.prepared.url, { max: 2 });
    await waitForEffects(database.sql);
  }, 180_000);
  afterAll(async () => {
    await database?.close();
  });

  it("storage bench (small): the default policy keeps ≤ 25 % of a finished thread's bytes and no pending thread changes", async () => {
    const result = await runStorageBench({
      database,
      templates,
      total: 200,
      days: 90,
      pendingEvery: 20,
      // The default policy (RETENTION_* defaults), as `npm run bench:storage` runs it.
      policy: defaultRetentionPolicy(),
      historySample: 40,
      log: () => {},
    });
    expect(result.pending_threads).toBe(10);
    expect(result.pending_threads_changed).toBe(0);
    expect(result.ratio).toBeLessThanOrEqual(0.25);
    expect(result.history_pages_checked).toBeGreaterThan(0);
    expect(result.truncated_roots_seen).toBeGreaterThan(0);
    // Each step shrinks what a finished thread costs.
    const totals = result.per_step.map((s) => s.bytes_per_finished_thread.total);
    for (let i = 1; i < totals.length; i++) expect(totals[i]).toBeLessThan(totals[i - 1]!);
  }, 240_000);

  it("truncates finished threads to the last N checkpoints of their head chain; the oldest kept is a root marked truncated and every kept history page renders", async () => {
    const pendingBefore = await threadPrint(templates.pending[0]!);
    const report = await applyOverHttp({ steps: ["history"] });
    expect(report.steps[0]!.threadsChanged).toBeGreaterThanOrEqual(templates.finished.length);
    for (const threadId of templates.finished) {
      const cps = await rows<{ id: string; parent: string | null; truncated: string | null }>(
        `SELECT checkpoint_id AS id, parent_checkpoint_id AS parent, metadata ->> 'truncated' AS truncated
         FROM checkpoint.checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id`,
        [threadId],
      );
      expect(cps).toHaveLength(KEEP);
      expect(cps.map((c) => c.truncated)).toEqual(["true", null, null]);
      expect(cps[0]!.parent).toBeNull();
      // Each kept checkpoint's parent is the one before it: one unbroken chain.
      expect(cps.slice(1).map((c) => c.parent)).toEqual(cps.slice(0, -1).map((c) => c.id));

      const history = await (await authedFetch(url(`/api/threads/${threadId}/history`), {}, "viewer")).json();
      expect(history.checkpoints.map((c: { truncated: boolean }) => c.truncated)).toEqual([
        false,
        false,
        true,
      ]);
      for (const c of cps) {
        const view = await authedFetch(url(`/api/threads/${threadId}/checkpoints/${c.id}`), {}, "viewer");
        expect([c.id, view.status]).toEqual([c.id, 200]);
      }
      const page = await authedFetch(url(`/threads/${threadId}/history`), {}, "viewer");
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("Earlier steps pruned");
      expect((await authedFetch(url(`/threads/${threadId}`), {}, "viewer")).status).toBe(200);
    }
    expect(await threadPrint(templates.pending[0]!)).toBe(pendingBefore);
  }, 120_000);

  it("reconnect after compaction: a client with an old after=seq gets a consistent snapshot and then live events", async () => {
    const threadId = templates.finished[0]!;
    const [before] = await rows<{ chunks: number; last: unknown }>(
      `SELECT count(*) FILTER (WHERE type = 'TEXT_MESSAGE_CONTENT')::int AS chunks,
         (SELECT event FROM events WHERE thread_id = $1 AND type = 'MESSAGES_SNAPSHOT' ORDER BY seq DESC LIMIT 1)
           AS last
       FROM events WHERE thread_id = $1`,
      [threadId],
    );
    // The log is sealed under the thread's key: opened here as the server opens it.
    const keys = { query: rows };
    const opened = (event: unknown) =>
      openThreadJson(keys, threadId, event) as Promise<Record<string, unknown>>;
    expect(before!.chunks).toBeGreaterThan(1);
    const report = await applyOverHttp({ steps: ["events"] });
    expect(report.steps[0]!.eventsDeleted).toBeGreaterThan(0);

    // The log: one event per message, in seq order, saying what the streamed chunks said.
    const log = await Promise.all(
      (
        await rows<{ seq: string; type: string; event: unknown }>(
          "SELECT seq, type, event FROM events WHERE thread_id = $1 ORDER BY seq",
          [threadId],
        )
      ).map(async (e) => ({ ...e, event: await opened(e.event) })),
    );
    const types = log.map((e) => e.type);
    expect(types).not.toContain("TEXT_MESSAGE_CONTENT");
    expect(types).not.toContain("TOOL_CALL_ARGS");
    expect(types).toContain("TEXT_MESSAGE_CHUNK");
    const snapshot = (await opened(before!.last)) as { messages: { id: string; content?: string }[] };
    const chunks = log.filter((e) => e.type === "TEXT_MESSAGE_CHUNK");
    expect(chunks.some((chunk) => snapshot.messages.some((m) => m.id === chunk.event.messageId))).toBe(true);
    for (const chunk of chunks) {
      const message = snapshot.messages.find((m) => m.id === chunk.event.messageId);
      if (message) expect(chunk.event.delta).toBe(message.content);
    }
    const [thread] = await rows<{ compacted: string; last: string }>(
      "SELECT events_compacted_seq AS compacted, last_seq AS last FROM threads WHERE id = $1",
      [threadId],
    );
    const horizon = Number(thread!.compacted);
    expect(horizon).toBe(Number(thread!.last));

    // A new message starts a run; a client that last saw seq 3 reconnects while it runs.
    const posted = await authedFetch(
      url(`/api/threads/${threadId}/runs`),
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(runBody(threadId, undefined, "When will the money for ORD-1002 arrive?")),
      },
      "operator",
    );
    expect(posted.status).toBe(200);
    const seen: SseEvent[] = [];
    await readSse(url(`/api/threads/${threadId}/events?after=3`), {}, (e) => seen.push(e), { maxMs: 60_000 });
    await posted.text();

    const prelude = seen.slice(0, 4);
    expect(prelude.map((e) => e.event.type)).toEqual([
      "RUN_STARTED",
      "MESSAGES_SNAPSHOT",
      "STATE_SNAPSHOT",
      "RUN_FINISHED",
    ]);
    expect(prelude.map((e) => e.seq)).toEqual([horizon, horizon, horizon, horizon]);
    expect(prelude[1]!.event.messages).toEqual(snapshot.messages);
    const live = seen.slice(4);
    expect(live[0]?.event.type).toBe("RUN_STARTED");
    expect(live[0]?.seq).toBe(horizon + 1);
    expect(live.map((e) => e.seq)).toEqual(live.map((_, i) => horizon + 1 + i));
    expect(["RUN_FINISHED", "RUN_ERROR"]).toContain(live.at(-1)?.event.type);
    expect(live.some((e) => e.event.type === "TEXT_MESSAGE_CONTENT" || e.event.type === "STEP_STARTED")).toBe(
      true,
    );

    // A client already past the compacted seq gets no snapshot: just what followed.
    const after: SseEvent[] = [];
    await readSse(url(`/api/threads/${threadId}/events?after=${horizon}`), {}, (e) => after.push(e));
    expect(after.map((e) => e.seq)).toEqual(live.map((e) => e.seq));
  }, 120_000);

  it("erasure: no row of any table holds the customer's name or email afterwards, the audit trail verifies, their thread renders and says so", async () => {
    const threadId = templates.finished[0]!;
    const customer = await orderCustomer(ctx.prepared.sql, "ORD-1002");
    const { name, email } = customer!;
    expect(name).toBe("Lars Jensen");
    const scan = (needle: string) => tablesHolding(rows, needle);
    // At rest, nothing of theirs in clear: sealed under their key.
    expect(await scan(name)).toEqual([]);
    expect(await scan(email)).toEqual([]);

    const res = await authedFetch(
      url("/api/admin/erasure"),
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) },
      "admin",
    );
    expect(res.status).toBe(200);
    const report = await res.json();
    expect(report.threads).toBeGreaterThanOrEqual(1);
    expect(report.keysDestroyed).toBeGreaterThan(0);

    expect(await scan(name)).toEqual([]);
    expect(await scan(email)).toEqual([]);
    expect(await orderCustomer(ctx.prepared.sql, "ORD-1002")).toEqual({
      name: "[erased]",
      email: "[erased]",
    });
    expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);
    const [entry] = await rows<{ detail: { customerRef: string } }>(
      "SELECT detail FROM audit_log WHERE action = 'erasure' ORDER BY id DESC LIMIT 1",
    );
    expect(entry!.detail.customerRef).toBe(report.customerRef);
    // Another customer's data is untouched.
    expect((await orderCustomer(ctx.prepared.sql, "ORD-1006"))?.name).toBe("Jonas Meyer");

    const page = await authedFetch(url(`/threads/${threadId}`), {}, "viewer");
    expect(page.status).toBe(200);
    // Its state was sealed under the customer's key, destroyed: the page says so (issue 49).
    expect(await page.text()).toContain("personal data was erased");
    const state = await authedFetch(url(`/api/threads/${threadId}`), {}, "viewer");
    expect(state.status).toBe(200);
    expect((await authedFetch(url(`/threads/${threadId}/history`), {}, "viewer")).status).toBe(200);
    // The trail refuses any other change.
    await expect(rows("UPDATE audit_log SET actor = 'x' WHERE id = 1")).rejects.toThrow(/append-only/);
    await expect(rows("DELETE FROM audit_log WHERE id = 1")).rejects.toThrow(/append-only/);
  }, 120_000);

  it("archives old finished threads as JSON lines and deletes them; decisions and audit rows stay, pending threads stay whole", async () => {
    const dir = mkdtempSync(join(tmpdir(), "archive-test-"));
    try {
      const archivedId = templates.finished[1]!;
      const pendingBefore = await threadPrint(templates.pending[0]!);
      const decisionsBefore = await rows(
        "SELECT * FROM decisions WHERE thread_id = $1 ORDER BY interrupt_id",
        [archivedId],
      );
      const auditBefore = await rows("SELECT id FROM audit_log WHERE thread_id = $1 ORDER BY id", [
        archivedId,
      ]);
      expect(decisionsBefore.length).toBeGreaterThan(0);
      const report = await applyRetention({
        db: database.db,
        policy: {
          keepCheckpoints: KEEP,
          truncateAfterMs: 0,
          compactAfterMs: 0,
          archiveAfterMs: 0,
          archiveDir: dir,
        },
        steps: ["archive"],
        actor: { id: "system:test", label: "retention test", role: null },
      });
      const step = report.steps[0]!;
      expect(step.threadsArchived).toBeGreaterThanOrEqual(1);
      const lines = readFileSync(step.archiveFile!, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const line = lines.find((l) => l.threadId === archivedId);
      expect(line.thread.id).toBe(archivedId);
      expect(line.checkpoints.length).toBeGreaterThan(0);
      expect(line.events.length).toBeGreaterThan(0);
      // Saver values stay sealed under the customer's key (base64): destroying it reaches the archive too. None is
      // in clear.
      const types = line.checkpointBlobs.map((b: { type: string }) => b.type);
      expect(types.filter((t: string) => t.startsWith("sealed:")).length).toBeGreaterThan(0);
      expect(types.filter((t: string) => t === "json")).toEqual([]);

      for (const table of [
        "threads",
        "runs",
        "events",
        "checkpoints",
        "checkpoint_blobs",
        "checkpoint_writes",
      ]) {
        const column = table === "threads" ? "id" : "thread_id";
        expect([table, await ctx.prepared.sql.count(table, `${column} = $1`, [archivedId])]).toEqual([
          table,
          0,
        ]);
      }
      expect(
        await rows("SELECT * FROM decisions WHERE thread_id = $1 ORDER BY interrupt_id", [archivedId]),
      ).toEqual(decisionsBefore);
      expect(await rows("SELECT id FROM audit_log WHERE thread_id = $1 ORDER BY id", [archivedId])).toEqual(
        auditBefore,
      );
      expect(await threadPrint(templates.pending[0]!)).toBe(pendingBefore);
      expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);
      const [audited] = await rows<{ n: number }>(
        "SELECT count(*)::int AS n FROM audit_log WHERE action = 'archive' AND detail -> 'threadIds' ? $1",
        [archivedId],
      );
      expect(audited!.n).toBe(1);
      // The archived thread is gone from the console, not an error.
      expect((await authedFetch(url(`/api/threads/${archivedId}`), {}, "viewer")).status).toBe(404);

      // Erasing its customer reaches the archive file too.
      const customer = await orderCustomer(ctx.prepared.sql, "ORD-1006");
      // The archive holds the thread's rows as stored: everything personal sealed under its customer's key (the
      // thread's subject), nothing of theirs in clear.
      const archived = readFileSync(step.archiveFile!, "utf8");
      const archivedLine = archived
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { threadId: string; thread: { subject_id: string } })
        .find((l) => l.threadId === archivedId);
      expect(archived).toContain("$sealed");
      expect(archived.toLowerCase()).not.toContain(customer!.name.toLowerCase());
      expect(archived.toLowerCase()).not.toContain(customer!.email.toLowerCase());
      const subjectKeys = () =>
        ctx.prepared.sql.count("vault.subject_keys", "subject_id = $1", [archivedLine!.thread.subject_id]);
      expect(await subjectKeys()).toBe(1);
      const erased = await eraseCustomer({
        db: database.db,
        email: customer!.email,
        actor: { id: "system:test", label: "retention test", role: null },
        archiveDir: dir,
      });
      // Erasure reaches the archive by its key: destroyed, so what the file sealed under it is unreadable for good.
      expect(erased.keysDestroyed).toBeGreaterThan(0);
      expect(await subjectKeys()).toBe(0);
      const text = readFileSync(step.archiveFile!, "utf8");
      expect(text.toLowerCase()).not.toContain(customer!.name.toLowerCase());
      expect(text.toLowerCase()).not.toContain(customer!.email.toLowerCase());
      expect(
        text
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l).threadId),
      ).toContain(archivedId);
      expect(await rows("SELECT * FROM audit_log_verify()")).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
