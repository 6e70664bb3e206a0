import { openPostgres } from "@/lib/db/open";
import { appendEvents } from "@/lib/db/queries/events";
import { finishRun } from "@/lib/db/queries/runs";
import { authedFetch } from "../support/auth";
import type { TestServer } from "../support/server";
import { agentFor, createTicket, runBody, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";
import { readSse, type SseEvent } from "./sse";

/** Bounded retries, and a stale owner that cannot write over the new one. */
describe("recovery limits", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;

  beforeAll(async () => {
    prepared = await prepareDatabase("recover");
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: { RUN_LEASE_MS: "1000", RUN_SWEEP_INTERVAL_MS: "200", MAX_RUN_ATTEMPTS: "2" },
    });
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
  });

  async function pausedThread() {
    const message = "Refund ORD-1002 please, it broke.";
    const threadId = await createTicket(server!.url, message);
    const first = await runOnce(agentFor(server!.url, threadId), { message });
    return { threadId, interruptId: first.interrupts[0]!.id };
  }

  /** A resume run claimed by a process that died, which had already been recovered `attempts - 1` times. */
  async function orphanedResume(
    threadId: string,
    interruptId: string,
    attempts: number,
    owner = "elsewhere:1:dead",
  ) {
    const runId = crypto.randomUUID();
    const input = {
      kind: "resume",
      actor: "ghost",
      resume: [{ interruptId, status: "resolved", payload: { decision: "approve" } }],
    };
    await prepared.sql.rows(
      `UPDATE decisions SET status = 'resolved', resolved_by = 'ghost', resolved_at = now(), answer = '{"decision":"approve"}'
       WHERE interrupt_id = $1`,
      [interruptId],
    );
    await prepared.sql.rows(
      `INSERT INTO runs (id, thread_id, kind, status, input, owner, lease_expires_at, attempts, started_at)
       VALUES ($1, $2, 'resume', 'running', $3, $5, now() - interval '1 minute', $4, now())`,
      [runId, threadId, JSON.stringify(input), attempts, owner],
    );
    return runId;
  }

  it("stops a run that keeps crashing after MAX_RUN_ATTEMPTS and shows its error", async () => {
    const { threadId, interruptId } = await pausedThread();
    const lastSeq = Number(
      (await (await authedFetch(`${server!.url}/api/threads/${threadId}`)).json()).lastSeq,
    );
    const runId = await orphanedResume(threadId, interruptId, 2);
    const seen: SseEvent[] = [];
    const deadline = Date.now() + 15_000;
    while (!seen.some((e) => e.event.type === "RUN_ERROR") && Date.now() < deadline) {
      await readSse(`${server!.url}/api/threads/${threadId}/events?after=${lastSeq}`, {}, (e) =>
        seen.push(e),
      );
      await new Promise((r) => setTimeout(r, 200));
    }
    const error = seen.find((e) => e.event.type === "RUN_ERROR")?.event;
    expect(error).toMatchObject({ code: "internal:run_abandoned" });
    const [run] = await prepared.sql.rows<{ status: string; error_code: string }>(
      "SELECT status, error_code FROM runs WHERE id = $1",
      [runId],
    );
    expect(run).toEqual({ status: "failed", error_code: "internal:run_abandoned" });
    const view = await (await authedFetch(`${server!.url}/api/threads/${threadId}`)).json();
    expect(view.status).toBe("failed");
    expect(await prepared.sql.count("refunds")).toBe(0);
  });

  it("continues an orphaned run that has attempts left, from its last checkpoint", async () => {
    const { threadId, runId } = await createAndOrphan();
    // The thread already reads "interrupted" from its first pause, so wait on the orphaned run itself.
    const deadline = Date.now() + 15_000;
    let run: { status: string; attempts: number } | undefined;
    while (Date.now() < deadline && (!run || run.status === "running")) {
      await new Promise((r) => setTimeout(r, 200));
      [run] = await prepared.sql.rows<{ status: string; attempts: number }>(
        "SELECT status, attempts FROM runs WHERE id = $1",
        [runId],
      );
    }
    // It paused at the next decision; having made progress, its crash count started over.
    expect(run).toEqual({ status: "interrupted", attempts: 1 });
    const view = await (await authedFetch(`${server!.url}/api/threads/${threadId}`)).json();
    expect(view.status).toBe("interrupted"); // now waiting at confirm_email
    expect(view.pendingInterrupts.map((i: { action: string }) => i.action)).toEqual(["confirm_email"]);
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-1008'")).toBe(1);
  });

  it("takes over a run its own instance claimed but no longer executes (lost, not crashed)", async () => {
    const message = "Refund ORD-1010 please, the shoes fell apart.";
    const threadId = await createTicket(server!.url, message);
    const first = await runOnce(agentFor(server!.url, threadId), { message });
    // The server's own owner id, as it wrote it on the first run.
    const [own] = await prepared.sql.rows<{ owner: string }>(
      "SELECT owner FROM runs WHERE thread_id = $1 AND kind = 'input'",
      [threadId],
    );
    const runId = await orphanedResume(threadId, first.interrupts[0]!.id, 1, own!.owner);
    const deadline = Date.now() + 15_000;
    let run: { status: string } | undefined;
    while (Date.now() < deadline && (!run || run.status === "running")) {
      await new Promise((r) => setTimeout(r, 200));
      [run] = await prepared.sql.rows<{ status: string }>("SELECT status FROM runs WHERE id = $1", [runId]);
    }
    expect(run).toEqual({ status: "interrupted" });
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-1010'")).toBe(1);
  });

  async function createAndOrphan() {
    const message = "Refund ORD-1008 please, it broke.";
    const threadId = await createTicket(server!.url, message);
    const first = await runOnce(agentFor(server!.url, threadId), { message });
    const interruptId = first.interrupts[0]!.id;
    const runId = await orphanedResume(threadId, interruptId, 1);
    return { threadId, runId };
  }

  it("refuses writes from a stale owner after another instance took the run over", async () => {
    const { threadId } = await pausedThread();
    const db = openPostgres(prepared.url, { max: 2 });
    try {
      const runId = crypto.randomUUID();
      await prepared.sql.rows(
        `INSERT INTO runs (id, thread_id, kind, status, owner, lease_expires_at) VALUES ($1, $2, 'input', 'running', 'new-owner', now() + interval '1 minute')`,
        [runId, threadId],
      );
      const before = await prepared.sql.count("events", "thread_id = $1", [threadId]);
      const batch = [
        { seq: 10_000, runId, type: "CUSTOM", event: { type: "CUSTOM", name: "stale", value: 1 } },
      ];
      expect(await appendEvents({ db: db.db, threadId, runId, owner: "stale-owner", batch })).toBe(false);
      expect(await finishRun({ db: db.db, runId, owner: "stale-owner", status: "succeeded" })).toBe(false);
      expect(await prepared.sql.count("events", "thread_id = $1", [threadId])).toBe(before);
      expect(await appendEvents({ db: db.db, threadId, runId, owner: "new-owner", batch })).toBe(true);
      await prepared.sql.rows("UPDATE runs SET status = 'cancelled' WHERE id = $1", [runId]);
    } finally {
      await db.close();
    }
  });
});

/**
 * An execution whose run was taken over stops at its next event write, not at the next heartbeat: the heartbeat runs
 * every RUN_LEASE_MS / 3 (20 s here), and an execution left running that long writes checkpoints beside the new
 * owner's (a second head the ledger never hears of).
 */
describe("a run taken over mid-stream", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;

  beforeAll(async () => {
    prepared = await prepareDatabase("takeover");
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: { RUN_LEASE_MS: "60000", OFFLINE_TOKEN_DELAY_MS: "40" },
    });
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
  });

  it("stops its graph at the first event write that finds another owner: no checkpoint after the takeover", async () => {
    const message = "Refund ORD-1002 please, it broke.";
    const threadId = await createTicket(server!.url, message);
    const first = await runOnce(agentFor(server!.url, threadId), { message });
    // The approval's run streams the reply to the customer token by token.
    const resume = [
      { interruptId: first.interrupts[0]!.id, status: "resolved", payload: { decision: "approve" } },
    ];
    const client = new AbortController();
    const streaming = authedFetch(
      `${server!.url}/api/threads/${threadId}/runs`,
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(runBody(threadId, resume)),
        signal: client.signal,
      },
      "supervisor",
    ).then((res) => res.text().catch(() => ""));
    const count = (table: string, where = "thread_id = $1") => prepared.sql.count(table, where, [threadId]);
    // Take the run over while its model streams tokens (each one an event to write).
    const deadline = Date.now() + 30_000;
    while ((await count("events", "thread_id = $1 AND type = 'TEXT_MESSAGE_CONTENT'")) < 3) {
      if (Date.now() > deadline) throw new Error("the run never streamed tokens");
      await new Promise((r) => setTimeout(r, 20));
    }
    await prepared.sql.rows(
      "UPDATE runs SET owner = 'thief:1:elsewhere' WHERE thread_id = $1 AND status = 'running'",
      [threadId],
    );
    const checkpointsAtTakeover = await count("checkpoint.checkpoints");
    // Long enough for the reply to finish and the run to reach its next question had the execution gone on (it took
    // about half a second more before this rule).
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await count("checkpoint.checkpoints")).toBe(checkpointsAtTakeover);
    // Nothing asked in its name either: the question the run would have reached (the email) was never recorded.
    expect(await count("decisions", "thread_id = $1 AND action = 'confirm_email'")).toBe(0);
    client.abort();
    await streaming.catch(() => {});
    await prepared.sql.rows("UPDATE runs SET status = 'cancelled' WHERE thread_id = $1", [threadId]);
  }, 60_000);
});
