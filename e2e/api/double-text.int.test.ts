import { authedFetch, authHeaders, type Who } from "../support/auth";
import type { TestServer } from "../support/server";
import { createTicket, runBody } from "./client";
import { countCustomEvents } from "./sealed";
import { type Backend, cleanUp, prepareDatabase, type Sql, serverOn, startTestServer, until } from "./setup";
import { readSse, readSseBody, type SseEvent } from "./sse";

/*
 * Double texting (issue 32): a second message 50 ms after the first, while the first one's run is working, follows the
 * thread's agent's declared strategy. Refund: `enqueue` — the second message waits, durably, until the thread waits
 * for nothing, then runs as its own run (its stream carries only that run); a third one queues behind it. Order
 * support: `interrupt` — the first run is stopped at once and the second message runs from its last checkpoint. A
 * kill variant: the server that took the first message is killed before the second arrives at another instance;
 * neither is lost. Both databases: the embedded one through the API only.
 */

const SLOW = {
  // The offline models take their time (per token / per word), so a run is still working 50 ms later.
  OFFLINE_TOKEN_DELAY_MS: "150",
};

interface QueuedAnswer {
  queued: true;
  runId: string;
  strategy: string;
  position: number;
  stopping: string | null;
  events: string;
}

interface Stream {
  runId: string;
  /** The events of its run: streamed by the POST, or — when it was queued — read from `events` once it runs. */
  events: SseEvent[];
  status: Promise<number>;
  /** The 202 answer of a queued message; null when the POST streamed its run at once. */
  queued: Promise<QueuedAnswer | null>;
}

/** POST a message to the thread's runs as `who`: its run's events, streamed or (queued) followed once it runs. */
async function send(base: string, threadId: string, message: string, who: Who): Promise<Stream> {
  const body = runBody(threadId, undefined, message);
  const events: SseEvent[] = [];
  let answered: (q: QueuedAnswer | null) => void = () => {};
  const queued = new Promise<QueuedAnswer | null>((resolve) => {
    answered = resolve;
  });
  const url = `${base}/api/threads/${threadId}/runs`;
  const status = (async () => {
    const res = await authedFetch(
      url,
      {
        method: "POST",
        headers: {
          ...(await authHeaders(url, who)),
          "content-type": "application/json",
          accept: "text/event-stream",
        },
        body: JSON.stringify(body),
      },
      who,
    );
    if (res.status === 202) {
      const answer = (await res.json()) as QueuedAnswer;
      answered(answer);
      void follow(base, threadId, body.runId, answer.events, events);
      return res.status;
    }
    answered(null);
    if (res.body) await readSseBody(res.body, (e) => events.push(e));
    return res.status;
  })().catch(() => {
    // A server killed under the stream ends it with a network error: the stream is over, nothing more.
    answered(null);
    return -1;
  });
  return { runId: body.runId, events, status, queued };
}

/** Follow a queued message on the thread's event log until its run ended; `into` gets that run's events only. */
async function follow(base: string, threadId: string, runId: string, events: string, into: SseEvent[]) {
  const all: SseEvent[] = [];
  let after = Number(new URL(events, base).searchParams.get("after"));
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const url = `${base}/api/threads/${threadId}/events?after=${after}`;
    await readSse(
      url,
      { headers: await authHeaders(url, "viewer") },
      (e) => {
        all.push(e);
        after = e.seq;
      },
      { maxMs: 20_000 },
    ).catch(() => -1);
    const start = all.findIndex((e) => e.event.type === "RUN_STARTED" && e.event.runId === runId);
    if (start >= 0) {
      const end = all.findIndex(
        (e, i) => i > start && (e.event.type === "RUN_FINISHED" || e.event.type === "RUN_ERROR"),
      );
      into.splice(0, into.length, ...all.slice(start, end >= 0 ? end + 1 : undefined));
      if (end >= 0) return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const types = (s: Stream) => s.events.map((e) => e.event.type);
const ended = (s: Stream) =>
  s.events.find((e) => e.event.type === "RUN_FINISHED" || e.event.type === "RUN_ERROR");

interface View {
  status: string;
  activeRunId: string | null;
  messages: { role: string; content?: string }[];
  pendingInterrupts: { interruptId: string; action: string; payload?: unknown }[];
  queuedInputs: { runId: string; text: string; from: string; strategy: string }[];
}

async function view(base: string, threadId: string): Promise<View> {
  const res = await authedFetch(`${base}/api/threads/${threadId}`, {}, "supervisor");
  if (res.status !== 200) throw new Error(`thread view: ${res.status}`);
  return (await res.json()) as View;
}

/** The answer that lets a refund thread go on: approve, the first option, the order number, send the reply. */
function answerTo(pending: { action: string; payload?: unknown }): unknown {
  const payload = (pending.payload ?? {}) as { options?: { id: string }[] };
  switch (pending.action) {
    case "refund_approval":
      return { decision: "approve" };
    case "confirm_email":
      return { choice: "send" };
    case "select_option":
      return { optionId: payload.options?.[0]?.id };
    case "input_text":
      return { text: "ORD-1002" };
    default:
      throw new Error(`unexpected question ${pending.action}`);
  }
}

/** Answer the pending decision the way a supervisor approves it (refund approval, then the reply's confirmation). */
async function approveAll(base: string, threadId: string): Promise<void> {
  for (let guard = 0; guard < 6; guard += 1) {
    const v = await until("the thread to settle", async () => {
      const now = await view(base, threadId);
      return now.activeRunId === null ? now : undefined;
    });
    const [pending] = v.pendingInterrupts;
    if (!pending) return;
    const decide = (answer: unknown) =>
      authedFetch(
        `${base}/api/threads/${threadId}/decisions/${pending.interruptId}`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ status: "resolved", answer }),
        },
        "supervisor",
      );
    let res = await decide(answerTo(pending));
    // Asked again about an order refunded in full already (a second message): nothing is left to approve.
    if (res.status === 422 && pending.action === "refund_approval")
      res = await decide({ decision: "reject", note: "Refunded already." });
    if (res.status !== 200 && res.status !== 202)
      throw new Error(`decide: ${res.status} ${await res.text()}`);
  }
}

describe.each<Backend>(["postgres", "pglite"])("double texting on %s", (backend) => {
  let base = "";
  let sql: Sql | null = null;
  let stop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ base, sql, stop } = await serverOn(backend, "dtext", SLOW));
  });
  afterAll(() => stop());

  test("refund (enqueue): messages 50 ms apart run one after the other, in order, each as its own run", async () => {
    // A refund the policy does not approve by itself: the first run pauses for a person.
    const first = "Refund ORD-1002 please, it arrived broken.";
    const threadId = await createTicket(base, first);
    const a = await send(base, threadId, first, "intake");
    await until("run A to start", () => types(a).includes("RUN_STARTED"));
    await new Promise((r) => setTimeout(r, 50));
    const b = await send(base, threadId, "Also: the box was soaked when it came.", "operator");
    await new Promise((r) => setTimeout(r, 50));
    const c = await send(base, threadId, "And I would like the refund on my card.", "operator");

    // Not refused: both are queued behind A, and say so.
    expect(await b.queued).toMatchObject({ queued: true, runId: b.runId, strategy: "enqueue", position: 1 });
    expect(await c.queued).toMatchObject({ queued: true, runId: c.runId, position: 2, stopping: null });
    // The same request again (a retry with its runId): refused as a run's reused id is, and nothing more is queued.
    const twice = await authedFetch(
      `${base}/api/threads/${threadId}/runs`,
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({
          ...runBody(threadId, undefined, "And I would like the refund on my card."),
          runId: c.runId,
        }),
      },
      "operator",
    );
    expect(twice.status).toBe(409);
    expect(((await twice.json()) as { code: string }).code).toBe("conflict:run_id");
    await a.status;
    expect(ended(a)?.event.type).toBe("RUN_FINISHED");
    let v = await view(base, threadId);
    expect(v.queuedInputs.map((q) => q.runId)).toEqual([b.runId, c.runId]);
    expect(v.queuedInputs[0]).toMatchObject({
      strategy: "enqueue",
      text: "Also: the box was soaked when it came.",
    });
    // A paused at the approval: the queue waits for the decision, not past it.
    expect(v.pendingInterrupts.map((p) => p.action)).toEqual(["refund_approval"]);
    expect(b.events).toEqual([]);

    await approveAll(base, threadId);
    // B runs next, once the thread waits for nothing; C after B (and B's own questions, if it asks any).
    await until("B's run to end", () => ended(b));
    await approveAll(base, threadId);
    await until("C's run to end", () => ended(c), 60_000);
    for (const s of [b, c]) {
      expect(s.events[0]?.event).toMatchObject({ type: "RUN_STARTED", runId: s.runId });
      expect(types(s).filter((t) => t === "RUN_STARTED")).toHaveLength(1);
    }
    // In order on the thread's log: B's run starts after everything before it ended, C's after B's ended.
    const lastA = ended(a)?.seq ?? 0;
    expect(b.events[0]?.seq).toBeGreaterThan(lastA);
    expect(c.events[0]?.seq).toBeGreaterThan(ended(b)?.seq ?? Infinity);
    v = await until("the thread to settle", async () => {
      const now = await view(base, threadId);
      return now.activeRunId === null ? now : undefined;
    });
    const humans = v.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(humans).toEqual([
      first,
      "Also: the box was soaked when it came.",
      "And I would like the refund on my card.",
    ]);
    expect(v.queuedInputs).toEqual([]);

    if (sql) {
      const runs = await sql.rows<{ id: string; kind: string; started_by_label: string; status: string }>(
        "SELECT id, kind, started_by_label, status FROM runs WHERE thread_id = $1 ORDER BY created_at",
        [threadId],
      );
      expect(runs[0]?.id).toBe(a.runId);
      const bAt = runs.findIndex((r) => r.id === b.runId);
      const cAt = runs.findIndex((r) => r.id === c.runId);
      // A, then the decisions' resumes, then B, then C: nothing of B ran before the thread was free.
      expect(bAt).toBeGreaterThan(1);
      expect(cAt).toBeGreaterThan(bAt);
      expect(runs.slice(1, bAt).every((r) => r.kind === "resume")).toBe(true);
      expect(runs[bAt]).toMatchObject({
        kind: "input",
        started_by_label: expect.stringContaining("operator"),
      });
      const audit = await sql.count("audit_log", "thread_id = $1 AND action = 'input_queued'", [threadId]);
      expect(audit).toBe(2);
    }
  });

  test("order support (interrupt): the newer message stops the run at once and runs from its last checkpoint", async () => {
    const first = "Hello, I have a problem with a delivery.";
    const threadId = await createTicket(base, first, undefined, "order_support");
    const a = await send(base, threadId, first, "intake");
    await until("run A to start", () => types(a).includes("RUN_STARTED"));
    await new Promise((r) => setTimeout(r, 50));
    const askedAt = Date.now();
    const b = await send(base, threadId, "It is about ORD-1006.", "operator");
    expect(await b.queued).toMatchObject({
      queued: true,
      runId: b.runId,
      strategy: "interrupt",
      stopping: a.runId,
    });

    await a.status;
    const stop = ended(a);
    // A stop, not a failure: RUN_FINISHED with AG-UI 1.0's `cancelled` outcome, who stopped it in its metadata.
    expect(stop?.event).toMatchObject({
      type: "RUN_FINISHED",
      outcome: { type: "cancelled" },
      metadata: { stop: { code: "conflict:run_cancelled" } },
    });
    expect(
      String((stop?.event.metadata as { stop?: { message?: string } } | undefined)?.stop?.message),
    ).toMatch(/Stopped by a newer message from .*operator/);
    expect(Date.now() - askedAt).toBeLessThan(2_000);

    await until("B's run to end", () => ended(b), 60_000);
    expect(b.events[0]?.event).toMatchObject({ type: "RUN_STARTED", runId: b.runId });
    expect(ended(b)?.event.type).toBe("RUN_FINISHED");
    const v = await until("the thread to settle", async () => {
      const now = await view(base, threadId);
      return now.activeRunId === null ? now : undefined;
    });
    // Both messages are in the conversation; A's unfinished answer to the first is not.
    const said = v.messages.map((m) => `${m.role}:${m.content ?? ""}`);
    expect(said.filter((m) => m.startsWith("user:"))).toEqual([
      `user:${first}`,
      "user:It is about ORD-1006.",
    ]);
    expect(said.some((m) => m.includes("Please tell us your order number"))).toBe(false);
    // B looked the order up and proposes store credit for a person to review.
    expect(v.pendingInterrupts.map((p) => p.action)).toEqual(["tool_review"]);
    expect(v.queuedInputs).toEqual([]);
    if (sql) {
      const [stopped] = await sql.rows<{ status: string; cancel_requested_by: string }>(
        "SELECT status, cancel_requested_by FROM runs WHERE id = $1",
        [a.runId],
      );
      expect(stopped?.status).toBe("cancelled");
      expect(stopped?.cancel_requested_by).toMatch(/^a newer message from /);
    }
  });

  test("an agent that rejects (account change): the second message is refused and nothing is queued", async () => {
    const threadId = await createTicket(
      base,
      "Please change my payout account to NL91ABNA0417164300, ORD-1003.",
      undefined,
      "account_change",
    );
    const a = await send(
      base,
      threadId,
      "Please change my payout account to NL91ABNA0417164300, ORD-1003.",
      "intake",
    );
    await until("run A to start", () => types(a).includes("RUN_STARTED"));
    const res = await authedFetch(
      `${base}/api/threads/${threadId}/runs`,
      {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(runBody(threadId, undefined, "Actually, use another account.")),
      },
      "operator",
    );
    await a.status;
    // The run may have ended before the second message arrived: then the thread waits for its review instead.
    expect(res.status).toBe(409);
    expect(["conflict:run_active", "conflict:interrupt_pending"]).toContain(
      ((await res.json()) as { code: string }).code,
    );
    expect((await view(base, threadId)).queuedInputs).toEqual([]);
  });
});

describe.each<Backend>(["postgres", "pglite"])("double texting, rollback, on %s", (backend) => {
  // The deployment overrides the agent's declared strategy.
  const ENV = { ...SLOW, MULTITASK: "order_support=rollback" };
  let base = "";
  let sql: Sql | null = null;
  let stop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ base, sql, stop } = await serverOn(backend, "dtextrb", ENV));
  });
  afterAll(() => stop());

  test("order support (rollback): the stopped run's steps are abandoned and the newer message runs from before it", async () => {
    const first = "Hello, I have a problem with a delivery.";
    const threadId = await createTicket(base, first, undefined, "order_support");
    const one = await send(base, threadId, first, "intake");
    await one.status;
    expect(ended(one)?.event.type).toBe("RUN_FINISHED");
    const before = await view(base, threadId);
    const wrong = "Sorry, that was meant for another shop.";
    const two = await send(base, threadId, wrong, "operator");
    await until("run 2 to start", () => types(two).includes("RUN_STARTED"));
    await new Promise((r) => setTimeout(r, 50));
    const three = await send(base, threadId, "It is about ORD-1002.", "operator");
    expect(await three.queued).toMatchObject({ queued: true, runId: three.runId });

    await two.status;
    expect(ended(two)?.event).toMatchObject({
      type: "RUN_FINISHED",
      outcome: { type: "cancelled" },
      metadata: { stop: { code: "conflict:run_cancelled" } },
    });
    await until("run 3 to end", () => ended(three), 60_000);
    expect(three.events[0]?.event).toMatchObject({ type: "RUN_STARTED", runId: three.runId });
    const v = await until("the thread to settle", async () => {
      const now = await view(base, threadId);
      return now.activeRunId === null ? now : undefined;
    });
    // The conversation is run 1's, then the newer message: the rolled-back message is not in it.
    const users = v.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual([first, "It is about ORD-1002."]);
    expect(v.messages.slice(0, before.messages.length)).toEqual(before.messages);
    expect(v.pendingInterrupts.map((p) => p.action)).toEqual(["tool_review"]);
    // The history shows the stopped run's steps as rolled back, and the head is not among them.
    const history = (await (
      await authedFetch(`${base}/api/threads/${threadId}/history?limit=200`, {}, "viewer")
    ).json()) as { checkpoints: { abandoned: boolean; isHead: boolean; branch: string }[] };
    const rolledBack = history.checkpoints.filter((c) => c.abandoned);
    expect(rolledBack.length).toBeGreaterThan(0);
    expect(rolledBack.some((c) => c.isHead || c.branch === "main")).toBe(false);
    if (sql) {
      const rows = await sql.rows<{
        checkpoint_id: string;
        parent_checkpoint_id: string | null;
        abandoned: unknown;
      }>(
        "SELECT checkpoint_id, parent_checkpoint_id, metadata->'abandoned' AS abandoned FROM checkpoint.checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id",
        [threadId],
      );
      const abandoned = rows.filter((r) => r.abandoned !== null);
      expect(abandoned.length).toBeGreaterThan(0);
      for (const r of abandoned) expect(r.abandoned).toEqual({ run: two.runId, for: three.runId });
      // None of them is behind the head: the head's line of ancestors skips the stopped run.
      const parent = new Map(rows.map((r) => [r.checkpoint_id, r.parent_checkpoint_id]));
      const line = new Set<string>();
      for (let id: string | null | undefined = rows.at(-1)?.checkpoint_id; id; id = parent.get(id))
        line.add(id);
      expect(abandoned.some((r) => line.has(r.checkpoint_id))).toBe(false);
    }
  });
});

describe("double texting across a kill", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let a: TestServer;
  let b: TestServer;
  const ENV = { ...SLOW, RUN_LEASE_MS: "2000", RUN_SWEEP_INTERVAL_MS: "500" };

  beforeAll(async () => {
    prepared = await prepareDatabase("dtextkill");
    [a, b] = await Promise.all([
      startTestServer({ databaseUrl: prepared.url, env: ENV }),
      startTestServer({ databaseUrl: prepared.url, env: ENV }),
    ]);
  });
  afterAll(async () => {
    await cleanUp([a, b], prepared);
  });

  test("a MULTITASK naming no agent, or no strategy, refuses the start", async () => {
    await expect(
      startTestServer({ databaseUrl: prepared.url, env: { MULTITASK: "refunds=enqueue" } }),
    ).rejects.toThrow(/MULTITASK names no registered agent: refunds/);
    await expect(
      startTestServer({ databaseUrl: prepared.url, env: { MULTITASK: "refund=queue" } }),
    ).rejects.toThrow(/refund=queue.*reject, enqueue, interrupt, rollback/);
  });

  test("the server that took the first message is killed before the second: neither is lost", async () => {
    const first = "Refund ORD-1004 please, it arrived broken.";
    const threadId = await createTicket(a.url, first);
    const one = await send(a.url, threadId, first, "intake");
    await until("run 1 to start on A", () => types(one).includes("RUN_STARTED"));
    await a.kill();
    await new Promise((r) => setTimeout(r, 50));
    const two = await send(b.url, threadId, "Also: the box was soaked when it came.", "operator");
    // Run 1 still holds the thread (its owner's lease has not run out): the second message is queued, not refused.
    expect(await two.queued).toMatchObject({ queued: true, runId: two.runId });
    // B takes run 1 over when its lease expires, finishes it to the approval; the decisions free the thread.
    await approveAll(b.url, threadId);
    await until("the second message's run to end", () => ended(two), 60_000);
    expect(two.events[0]?.event).toMatchObject({ type: "RUN_STARTED", runId: two.runId });
    const runs = await prepared.sql.rows<{ id: string; kind: string; attempts: number }>(
      "SELECT id, kind, attempts FROM runs WHERE thread_id = $1 ORDER BY created_at",
      [threadId],
    );
    expect(runs[0]).toMatchObject({ id: one.runId, kind: "input" });
    // B took run 1 over from where A died (not started again): its log says it was recovered.
    const recovered = await countCustomEvents(prepared.sql, "run_recovered", one.runId);
    expect(recovered).toBe(1);
    expect(runs.some((r) => r.id === two.runId && r.kind === "input")).toBe(true);
    const v = await view(b.url, threadId);
    expect(v.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      first,
      "Also: the box was soaked when it came.",
    ]);
  });
});
