import { authedFetch } from "../support/auth";
import type { TestServer } from "../support/server";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";
import { readSse, type SseEvent } from "./sse";

const RUN_ENV = { RUN_LEASE_MS: "1000", RUN_SWEEP_INTERVAL_MS: "200", OFFLINE_TOKEN_DELAY_MS: "200" };

/** Runs outlive requests and processes: many instances, reconnects, forks. */
describe("durable runs over HTTP", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let a: TestServer | undefined;
  let b: TestServer | undefined;

  beforeAll(async () => {
    prepared = await prepareDatabase("durable", { prefix: "ORD-4", count: 4 });
    [a, b] = await Promise.all([
      startTestServer({ databaseUrl: prepared.url, env: RUN_ENV }),
      startTestServer({ databaseUrl: prepared.url, env: RUN_ENV }),
    ]);
  });
  afterAll(async () => {
    await cleanUp([a, b], prepared);
  });

  async function pausedAtApproval(server: TestServer, order: string) {
    const message = `Refund ${order} please, it broke.`;
    const threadId = await createTicket(server.url, message);
    const first = await runOnce(agentFor(server.url, threadId), { message });
    return { threadId, interrupt: first.interrupts[0]! };
  }

  function resumeBody(threadId: string, interruptId: string) {
    return JSON.stringify({
      threadId,
      runId: crypto.randomUUID(),
      messages: [],
      tools: [],
      context: [],
      resume: [{ interruptId, status: "resolved", payload: { decision: "approve" } }],
    });
  }

  it("streams a run on A live to a client on B, and B finishes it when A is killed", async () => {
    const { threadId, interrupt } = await pausedAtApproval(a!, "ORD-4000");
    // Start the resume on A and drop that connection after the first events.
    await readSse(
      `${a!.url}/api/threads/${threadId}/runs`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: resumeBody(threadId, interrupt.id),
      },
      (e, stop) => e.seq > 0 && stop(),
    );
    const seen: SseEvent[] = [];
    let killedAt = 0;
    const started = Date.now();
    await readSse(`${b!.url}/api/threads/${threadId}/events?after=0`, {}, (e) => {
      seen.push(e);
      // Kill A once B has watched it stream some of the reply live.
      if (!killedAt && e.event.type === "TEXT_MESSAGE_CONTENT") {
        killedAt = Date.now();
        void a!.kill();
      }
    });
    expect(killedAt).toBeGreaterThan(0);
    const types = seen.map((e) => e.event.type);
    expect(types).toContain("CUSTOM"); // run_recovered: B took the run over
    expect(types[types.length - 1]).toBe("RUN_FINISHED");
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    // Bounded: lease (1 s) + sweep interval + the rest of the run, with slack for a loaded machine.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-4000'")).toBe(1);
    const [run] = await prepared.sql.rows<{ status: string; owner: string }>(
      "SELECT status, owner FROM runs WHERE thread_id = $1 AND kind = 'resume'",
      [threadId],
    );
    expect(run?.status).toBe("interrupted");
    a = await startTestServer({ databaseUrl: prepared.url, env: RUN_ENV });
  });

  it("shows every event exactly once, in order, to a client that reconnects 20 times during one run", async () => {
    const { threadId, interrupt } = await pausedAtApproval(b!, "ORD-4001");
    const firstSeq = Number((await (await authedFetch(`${b!.url}/api/threads/${threadId}`)).json()).lastSeq);
    const seen: SseEvent[] = [];
    await readSse(
      `${b!.url}/api/threads/${threadId}/runs`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: resumeBody(threadId, interrupt.id),
      },
      (e, stop) => {
        seen.push(e);
        stop();
      },
    );
    let reconnects = 0;
    let finished = false;
    while (!finished) {
      const after = seen[seen.length - 1]?.seq ?? firstSeq;
      const server = reconnects % 2 === 0 ? a! : b!; // alternate instances too
      reconnects += 1;
      // Drop the connection after a few dozen milliseconds each time, whatever arrived meanwhile.
      await readSse(
        `${server.url}/api/threads/${threadId}/events?after=${after}`,
        {},
        (e) => {
          seen.push(e);
          if (e.event.type === "RUN_FINISHED") finished = true;
        },
        { maxMs: reconnects < 25 ? 40 : undefined },
      );
    }
    expect(reconnects).toBeGreaterThanOrEqual(20);
    // The reconnects happened while the run was still going, not after it.
    const finishedAt = seen.findIndex((e) => e.event.type === "RUN_FINISHED");
    expect(finishedAt).toBe(seen.length - 1);
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => firstSeq + i + 1));
    expect(seen[0]?.event.type).toBe("RUN_STARTED");
    expect(seen[seen.length - 1]?.event.type).toBe("RUN_FINISHED");
  });

  it("forks at the approval of a finished thread; the branch rejects, the old branch still reads approved", async () => {
    const { threadId, interrupt } = await pausedAtApproval(b!, "ORD-4002");
    const agent = agentFor(b!.url, threadId);
    const email = await runOnce(agent, { resume: [answer(interrupt, { decision: "approve" })] });
    await runOnce(agent, { resume: [answer(email.interrupts[0]!, { choice: "send" })] });
    const finished = await (await authedFetch(`${b!.url}/api/threads/${threadId}`)).json();
    expect(finished.values.decision.decision).toBe("approve");
    const oldHead = finished.checkpointId as string;
    const approvalCheckpoint = finished.decisions.find(
      (d: { action: string }) => d.action === "refund_approval",
    ).checkpointId as string;

    const fork = await authedFetch(`${b!.url}/api/threads/${threadId}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ checkpointId: approvalCheckpoint }),
    });
    expect(fork.status).toBe(202);
    const forked = await fork.json();
    expect(forked.warnings.map((w: { code: string }) => w.code).sort()).toEqual([
      "side_effect:email",
      "side_effect:refund",
    ]);
    const streamed: SseEvent[] = [];
    await readSse(`${b!.url}${forked.events}`, {}, (e) => streamed.push(e));
    expect(streamed.find((e) => e.event.type === "CUSTOM")?.event.name).toBe("fork_side_effects");

    const branch = await (await authedFetch(`${b!.url}/api/threads/${threadId}`)).json();
    expect(branch.pendingInterrupts[0].action).toBe("refund_approval");
    const rejected = await runOnce(agentFor(b!.url, threadId), {
      resume: [
        {
          interruptId: branch.pendingInterrupts[0].interruptId,
          status: "resolved",
          payload: { decision: "reject", note: "what if" },
        },
      ],
    });
    await runOnce(agentFor(b!.url, threadId), {
      resume: [answer(rejected.interrupts[0]!, { choice: "dont_send" })],
    });

    const now = await (await authedFetch(`${b!.url}/api/threads/${threadId}`)).json();
    expect(now.values.decision.decision).toBe("reject");
    const old = await (await authedFetch(`${b!.url}/api/threads/${threadId}/checkpoints/${oldHead}`)).json();
    expect(old.values.decision.decision).toBe("approve");
    const history = await (await authedFetch(`${b!.url}/api/threads/${threadId}/history?limit=200`)).json();
    expect(history.branches.map((x: { label: string }) => x.label)).toEqual(["main", "branch-1"]);
    expect(
      history.checkpoints.find((c: { checkpointId: string }) => c.checkpointId === approvalCheckpoint)
        .childCount,
    ).toBe(2);
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-4002'")).toBe(1);
    expect(await prepared.sql.count("outbox", "thread_id = $1", [threadId])).toBe(1);
  });
});
