import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFor, answer, createTicket, payloadOf, postRun, runBody, runOnce } from "../api/client";
import { readSse } from "../api/sse";
import { authedFetch } from "../support/auth";
import { startEmbeddedServer } from "../support/embedded/server";
import type { TestServer } from "../support/server";

/**
 * The embedded default, end to end: `next start` with no DATABASE_URL (PGlite in the server's process, as a newcomer
 * runs it), driven over HTTP like the Postgres suites. Everything is read back through the API: the server is the
 * database's only client. An operator's day: a ticket, an approval, the email, an edited fork (which used to hang
 * the whole process), refusals that write nothing, history, the queue (claims, bulk) and the effects.
 */
describe("embedded database (PGlite): the server does what it does on Postgres", () => {
  let server: TestServer | undefined;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ server, stop } = await startEmbeddedServer());
  }, 180_000);
  afterAll(async () => {
    await stop?.();
  });

  const base = () => server!.url;
  const get = async (path: string) => {
    const res = await authedFetch(`${base()}${path}`);
    expect(res.status, `${path}: ${res.status}`).toBe(200);
    return res.json();
  };

  /** A ticket about `order` paused at its refund approval: thread id, the agent and the approval interrupt. */
  async function atApproval(order: string, message = `Refund ${order} please, it arrived broken.`) {
    const threadId = await createTicket(base(), message);
    const agent = agentFor(base(), threadId);
    const first = await runOnce(agent, { message });
    const approval = first.interrupts[0];
    expect(approval?.reason).toBe("refund_approval");
    return { threadId, agent, approval: approval! };
  }

  it("says it runs on the embedded database", async () => {
    const health = await (await fetch(`${base()}/api/health`)).json();
    expect(health).toMatchObject({ ok: true, status: "ok", database: "pglite" });
  });

  it("a refund: approval → approve → confirm email → send; one refund and one email, recorded once", async () => {
    const { threadId, agent, approval } = await atApproval("ORD-1002");
    expect(payloadOf(approval)).toMatchObject({
      action: "refund_approval",
      requested: { amountCents: 24900 },
    });
    const second = await runOnce(agent, { resume: [answer(approval, { decision: "approve" })] });
    expect(second.interrupts.map((i) => i.reason)).toEqual(["confirm_email"]);
    const third = await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "send" })] });
    expect((third.finished as { outcome?: { type: string } }).outcome?.type).toBe("success");

    const state = await get(`/api/threads/${threadId}`);
    expect(state.status).toBe("completed");
    expect(state.pendingInterrupts).toEqual([]);
    const { effects } = await get(`/api/threads/${threadId}/effects`);
    const kinds = (effects as { kind: string }[]).map((e) => e.kind).sort();
    expect(kinds).toEqual(["email", "payment"]);
  });

  it("an edited fork answers 202 and its branch runs to the approval again, with the edit", async () => {
    const { threadId, approval } = await atApproval("ORD-1008");
    const state = await get(`/api/threads/${threadId}`);
    const at = state.decisions.find((d: { interruptId: string }) => d.interruptId === approval.id)
      .checkpointId as string;
    const started = performance.now();
    const fork = await authedFetch(`${base()}/api/threads/${threadId}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        checkpointId: at,
        values: { requested: 10000, reason: "Only one corner is scratched." },
        asNode: "lookup_order",
      }),
    });
    const body = await fork.json();
    expect(fork.status, JSON.stringify(body)).toBe(202);
    expect(performance.now() - started).toBeLessThan(10_000);
    let finished = false;
    await readSse(`${base()}${body.events}`, {}, (e, stop) => {
      if (e.event.type === "RUN_FINISHED" || e.event.type === "RUN_ERROR") {
        finished = e.event.type === "RUN_FINISHED";
        stop();
      }
    });
    expect(finished).toBe(true);
    const branch = await get(`/api/threads/${threadId}`);
    expect(branch.checkpointId).not.toBe(state.checkpointId);
    expect(branch.pendingInterrupts).toHaveLength(1);
    expect(branch.pendingInterrupts[0]).toMatchObject({ action: "refund_approval" });
    expect(branch.values).toMatchObject({ requested: 10000, reason: "Only one corner is scratched." });
    const history = await get(`/api/threads/${threadId}/history?limit=200`);
    const ids = (history.checkpoints as { checkpointId: string }[]).map((c) => c.checkpointId);
    expect(ids).toEqual(expect.arrayContaining([at, body.checkpointId]));
    // The health check still answers: nothing is left waiting on the database.
    expect((await fetch(`${base()}/api/health`)).status).toBe(200);
  });

  it("refusals write nothing: a wrong answer, an unknown interrupt, the filer approving their own ticket", async () => {
    const { threadId, approval } = await atApproval("ORD-1004");
    const before = await get(`/api/threads/${threadId}`);
    const wrong = await postRun(
      base(),
      threadId,
      runBody(threadId, [answer(approval, { decision: "maybe" })]),
    );
    expect(wrong.status).toBe(422);
    expect(String(wrong.json?.code)).toMatch(/^unprocessable:/);
    const unknown = await postRun(
      base(),
      threadId,
      runBody(threadId, [
        { interruptId: "f".repeat(32), status: "resolved", payload: { decision: "approve" } },
      ]),
    );
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.status).toBeLessThan(500);
    // The intake key filed it: it cannot decide at all.
    const own = await postRun(
      base(),
      threadId,
      runBody(threadId, [answer(approval, { decision: "approve" })]),
      "intake",
    );
    expect(own.status).toBe(403);
    const after = await get(`/api/threads/${threadId}`);
    expect(after.checkpointId).toBe(before.checkpointId);
    expect(after.decisions).toEqual(before.decisions);
    expect(after.status).toBe("interrupted");
  });

  it("the queue: a claim is seen by others, and bulk approval decides what it may", async () => {
    const a = await atApproval("ORD-1008", "Refund ORD-1008 please, the screen is cracked.");
    const claim = await authedFetch(
      `${base()}/api/inbox/claims`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ interruptId: a.approval.id }),
      },
      "operator",
    );
    expect(claim.status).toBeLessThan(300);
    const claims = await get(`/api/inbox/claims?threadId=${a.threadId}`);
    expect(JSON.stringify(claims)).toContain(a.approval.id);

    const b = await atApproval("ORD-1002", "Refund ORD-1002 please, the left ear is silent.");
    const bulk = await authedFetch(`${base()}/api/inbox/bulk`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ interruptIds: [b.approval.id], verb: "reject", note: "Bulk test" }),
    });
    expect(bulk.status).toBeLessThan(300);
    const deadline = Date.now() + 20_000;
    let thread = await get(`/api/threads/${b.threadId}`);
    while (thread.pendingInterrupts[0]?.action !== "confirm_email" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      thread = await get(`/api/threads/${b.threadId}`);
    }
    const decided = thread.decisions.find((d: { interruptId: string }) => d.interruptId === b.approval.id);
    expect(decided).toMatchObject({ status: "resolved", answer: { decision: "reject" } });
  });

  it("many requests at once all get an answer (none waits on another's transaction for ever)", async () => {
    const tickets = await Promise.all(
      Array.from({ length: 6 }, (_, i) => createTicket(base(), `Refund ORD-1002 please (${i}).`)),
    );
    const reads = await Promise.all(
      tickets.flatMap((id) => [
        authedFetch(`${base()}/api/threads/${id}`),
        authedFetch(`${base()}/api/threads/${id}/history?limit=50`),
        fetch(`${base()}/api/health`),
      ]),
    );
    expect(reads.map((r) => r.status).every((s) => s === 200)).toBe(true);
  });
});

/**
 * What a newcomer's `npm start` does on the embedded database: demo operators and demo tickets in their states (a
 * pending approval, a finished refund, a forked thread, …), made at start through the same policy as anyone's
 * decisions. Nothing else tests the demo seed, which once failed silently on every first start.
 */
describe("embedded database: the newcomer's first start seeds the demo", () => {
  let server: TestServer | undefined;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ server, stop } = await startEmbeddedServer({ DEMO_THREADS: "true" }));
  }, 180_000);
  afterAll(async () => {
    await stop?.();
  });

  it("creates the demo tickets in their states, with no seeding error", async () => {
    const deadline = Date.now() + 90_000;
    while (!server!.log().includes("demo: demo tickets ready") && Date.now() < deadline) {
      expect(server!.log()).not.toContain("demo: seeding failed");
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(server!.log()).not.toContain("demo: seeding failed");
    expect(server!.log()).toContain("demo: demo tickets ready");
    const res = await authedFetch(`${server!.url}/api/threads?status=all&limit=50`);
    const { items } = (await res.json()) as {
      items: { thread: { threadId: string; status: string; title: string } }[];
    };
    const byTitle = new Map(items.map((i) => [i.thread.title, i.thread]));
    expect(byTitle.get("Headphones stopped charging")?.status).toBe("interrupted");
    expect(byTitle.get("Chipped mugs")?.status).toBe("completed");
    const laptop = byTitle.get("Scratched laptop");
    expect(laptop).toBeDefined();
    const state = await (await authedFetch(`${server!.url}/api/threads/${laptop!.threadId}`)).json();
    // Forked at the approval and rejected on the branch; the partial refund of the first line stays paid.
    expect(state.values.decision).toMatchObject({ decision: "reject" });
    const decided = (state.decisions as { action: string; status: string; resolvedBy: string }[]).filter(
      (d) => d.action === "refund_approval" && d.status === "resolved",
    );
    expect(decided).toHaveLength(2);
    for (const d of decided) expect(d.resolvedBy).toMatch(/^demo[: ]supervisor$/);
  });
});
