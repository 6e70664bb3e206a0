import { authedFetch } from "../support/auth";
import type { TestServer } from "../support/server";
import { agentFor, createTicket, runBody, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";
import { readSse, type SseEvent } from "./sse";

/*
 * Run control, cancel (issue 32): an operator stops a run that is streaming a slow reply. Two servers on one database:
 * the run executes on A; the cancel is sent to A (the owning instance) and, for the second run, to B (another
 * instance, which reaches A through the database). Either way the run ends `cancelled` within 2 s, its stream ends
 * with RUN_FINISHED and AG-UI 1.0's `cancelled` outcome (who stopped it in `metadata.stop`: `conflict:run_cancelled`,
 * "Stopped by …") — a stop, not a failure: the thread is `stopped` — nothing is written after it, and a run without
 * new input continues the thread.
 */
describe("cancel a run", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let a: TestServer;
  let b: TestServer;
  const ENV = {
    // A reply streams for several seconds: time to stop it halfway.
    OFFLINE_TOKEN_DELAY_MS: "200",
    // A long lease: only the notification (or the owner's own abort) can stop it within 2 s, not a takeover.
    RUN_LEASE_MS: "30000",
  };

  beforeAll(async () => {
    prepared = await prepareDatabase("cancel");
    a = await startTestServer({ databaseUrl: prepared.url, env: ENV });
    b = await startTestServer({ databaseUrl: prepared.url, env: ENV });
  });
  afterAll(async () => {
    await cleanUp([a, b], prepared);
  });

  const cancel = (server: TestServer, threadId: string, runId: string) =>
    authedFetch(`${server.url}/api/threads/${threadId}/runs/${runId}/cancel`, { method: "POST" }, "operator");

  /** A thread paused at its refund approval on A, and the approval's resume started there (streaming its reply). */
  async function streamingReply(order: string) {
    const message = `Refund ${order} please, it arrived broken.`;
    const threadId = await createTicket(a.url, message);
    const first = await runOnce(agentFor(a.url, threadId), { message });
    const interrupt = first.interrupts[0];
    if (!interrupt) throw new Error("no approval");
    const events: SseEvent[] = [];
    const body = runBody(threadId, [
      { interruptId: interrupt.id, status: "resolved", payload: { decision: "approve" } },
    ]);
    const streamed = readSse(
      `${a.url}/api/threads/${threadId}/runs`,
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(body),
      },
      (e) => events.push(e),
      { maxMs: 60_000 },
    );
    // Wait until the reply is being written (its tokens stream), then find the run.
    const deadline = Date.now() + 20_000;
    while (!events.some((e) => e.event.type === "TEXT_MESSAGE_CONTENT")) {
      if (Date.now() > deadline) throw new Error(`no reply streaming: ${events.map((e) => e.event.type)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const [run] = await prepared.sql.rows<{ id: string; owner: string }>(
      "SELECT id, owner FROM runs WHERE thread_id = $1 AND status = 'running'",
      [threadId],
    );
    if (!run) throw new Error("no running run");
    return { threadId, runId: run.id, events, streamed };
  }

  async function checkStopped(
    threadId: string,
    runId: string,
    events: SseEvent[],
    streamed: Promise<unknown>,
    askedAt: number,
    answer: Response,
  ) {
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(await answer.json()).toEqual({ runId, status: "cancelled" });
    expect(Date.now() - askedAt).toBeLessThan(2_000);
    // The open stream ended, with the code, not a hang.
    await streamed;
    const last = events.at(-1)?.event as
      | { type: string; outcome?: { type: string }; metadata?: { stop?: { code: string; message: string } } }
      | undefined;
    expect(last?.type).toBe("RUN_FINISHED");
    expect(last?.outcome).toEqual({ type: "cancelled" });
    expect(last?.metadata?.stop?.code).toBe("conflict:run_cancelled");
    expect(last?.metadata?.stop?.message).toMatch(/^Stopped by operator@/);
    expect(events.some((e) => e.event.type === "RUN_ERROR")).toBe(false);
    const [row] = await prepared.sql.rows<{
      status: string;
      error_code: string;
      cancel_requested_by: string;
    }>("SELECT status, error_code, cancel_requested_by FROM runs WHERE id = $1", [runId]);
    expect(row).toMatchObject({ status: "cancelled", error_code: "conflict:run_cancelled" });
    // Nothing after the stop: no event, no checkpoint, in the next second and a half.
    const counts = () =>
      prepared.sql.rows<{ events: number; checkpoints: number; last: string }>(
        `SELECT (SELECT count(*)::int FROM events WHERE thread_id = $1) AS events,
                (SELECT count(*)::int FROM checkpoint.checkpoints WHERE thread_id = $1) AS checkpoints,
                (SELECT type FROM events WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1) AS last`,
        [threadId],
      );
    const before = await counts();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await counts()).toEqual(before);
    expect(before[0]?.last).toBe("RUN_FINISHED");
    const audit = await prepared.sql.rows<{ action: string; actor: string }>(
      "SELECT action, actor FROM audit_log WHERE thread_id = $1 AND action = 'run_cancel'",
      [threadId],
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor).toMatch(/^operator@/);
    const view = await (await authedFetch(`${a.url}/api/threads/${threadId}`)).json();
    expect(view.status).toBe("stopped");
    expect(view.failure).toMatchObject({ code: "conflict:run_cancelled" });
  }

  it("on the instance that runs it: stops within 2 s, the stream ends with RUN_ERROR, nothing after; Try again continues", async () => {
    const { threadId, runId, events, streamed } = await streamingReply("ORD-1002");
    const askedAt = Date.now();
    const answer = await cancel(a, threadId, runId);
    await checkStopped(threadId, runId, events, streamed, askedAt, answer);

    // A finished run cannot be stopped; a run the thread does not have is not found.
    const again = await cancel(a, threadId, runId);
    expect(again.status).toBe(409);
    expect((await again.json()).code).toBe("conflict:run_finished");
    expect((await cancel(a, threadId, crypto.randomUUID())).status).toBe(404);

    // A run without new input continues from the last checkpoint: the reply is written this time, and the refund is paid once.
    const retried = await runOnce(agentFor(a.url, threadId), {});
    expect(retried.interrupts.map((i) => i.reason)).toEqual(["confirm_email"]);
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-1002'")).toBe(1);
  });

  it("from another instance: the owner hears it through the database and stops within 2 s", async () => {
    const { threadId, runId, events, streamed } = await streamingReply("ORD-1008");
    const [owner] = await prepared.sql.rows<{ owner: string }>("SELECT owner FROM runs WHERE id = $1", [
      runId,
    ]);
    const askedAt = Date.now();
    const answer = await cancel(b, threadId, runId);
    await checkStopped(threadId, runId, events, streamed, askedAt, answer);
    // It was A that stopped it (B never took it over).
    expect(owner?.owner).toBeTruthy();
    const [row] = await prepared.sql.rows<{ owner: string | null }>("SELECT owner FROM runs WHERE id = $1", [
      runId,
    ]);
    expect(row?.owner).toBe(owner?.owner);
  });

  it("the unmodified AG-UI client reads a stopped run as AG-UI 1.0's cancelled outcome, not an error", async () => {
    const message = "My headphones from ORD-1006 arrived broken, please refund them.";
    const threadId = await createTicket(a.url, message);
    const first = await runOnce(agentFor(a.url, threadId), { message });
    const interrupt = first.interrupts[0];
    if (!interrupt) throw new Error("no approval");
    // The approval's run, streamed through HttpAgent (its own event verifier), stopped while it writes the reply.
    const running = runOnce(agentFor(a.url, threadId), {
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "approve" } }],
    });
    let runId: string | undefined;
    const deadline = Date.now() + 20_000;
    while (!runId) {
      if (Date.now() > deadline) throw new Error("no running run");
      const [row] = await prepared.sql.rows<{ id: string }>(
        "SELECT id FROM runs WHERE thread_id = $1 AND status = 'running'",
        [threadId],
      );
      runId = row?.id;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
    expect((await cancel(a, threadId, runId)).status).toBe(200);
    const outcome = await running;
    expect(outcome.finished).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "cancelled" } });
    expect(outcome.events.some((e) => e.type === "RUN_ERROR")).toBe(false);
    expect(outcome.interrupts).toEqual([]);
  });

  it("a viewer may not stop a run", async () => {
    const threadId = await createTicket(a.url, "Refund ORD-1003 please, it broke.");
    const res = await authedFetch(
      `${a.url}/api/threads/${threadId}/runs/${crypto.randomUUID()}/cancel`,
      { method: "POST" },
      "viewer",
    );
    expect(res.status).toBe(403);
  });
});
