import { agentFor, createTicket, postRun, runBody, runOnce } from "../api/client";
import { countCustomEvents } from "../api/sealed";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { readSse, type SseEvent } from "../api/sse";
import type { TestServer } from "../support/server";

const LEASE_MS = 20_000;
const GRACE_MS = 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * SIGTERM drains: the instance stops taking runs (503), lets its runs finish for up to SHUTDOWN_GRACE_MS, then
 * releases their leases so another instance continues them at once — no lease is left to expire.
 */
describe("SIGTERM drains", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  const servers: TestServer[] = [];
  const start = async (env: Record<string, string>) => {
    const server = await startTestServer({
      databaseUrl: prepared.url,
      // The default sweep interval: a released run is taken over on notice, not by the next sweep.
      env: { RUN_LEASE_MS: String(LEASE_MS), RUN_SWEEP_INTERVAL_MS: "5000", ...env },
    });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    prepared = await prepareDatabase("drain", { prefix: "ORD-7", count: 4 });
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    await cleanUp([], prepared);
  });

  async function pausedAtApproval(server: TestServer, order: string) {
    const message = `Refund ${order} please, it broke.`;
    const threadId = await createTicket(server.url, message);
    const first = await runOnce(agentFor(server.url, threadId), { message });
    return { threadId, interruptId: first.interrupts[0]!.id };
  }

  /** Approve on `server` and stream the run; resolves when the server ends the stream. */
  function approve(
    server: TestServer,
    threadId: string,
    interruptId: string,
    onEvent: (e: SseEvent) => void,
  ) {
    const body = runBody(threadId, [{ interruptId, status: "resolved", payload: { decision: "approve" } }]);
    const done = readSse(
      `${server.url}/api/threads/${threadId}/runs`,
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      onEvent,
      { maxMs: 60_000 },
    );
    return { runId: body.runId, done };
  }

  async function runRow(runId: string) {
    const [row] = await prepared.sql.rows<{ owner: string | null; status: string; attempts: number }>(
      "SELECT owner, status, attempts FROM runs WHERE id = $1",
      [runId],
    );
    return row;
  }

  it("releases a run still executing after the grace, and the other instance takes it over within 1 s of the exit", async () => {
    const a = await start({ SHUTDOWN_GRACE_MS: String(GRACE_MS), CHAOS_REFUND_DELAY_MS: "8000" });
    const b = await start({});
    const { threadId, interruptId } = await pausedAtApproval(a, "ORD-7000");
    const later = await createTicket(b.url, "Refund ORD-7001 please, it broke.");
    const seen: SseEvent[] = [];
    let inRefund: () => void = () => {};
    const refunding = new Promise<void>((resolve) => {
      inRefund = resolve;
    });
    const { runId, done } = approve(a, threadId, interruptId, (e) => {
      seen.push(e);
      if (e.event.type === "STEP_STARTED" && e.event.stepName === "execute_refund") inRefund();
    });
    await refunding;
    const [{ owner: ownerA } = { owner: "" }] = await prepared.sql.rows<{ owner: string }>(
      "SELECT owner FROM runs WHERE id = $1",
      [runId],
    );

    const termAt = Date.now();
    a.terminate();
    // Draining: health says so, and a new run is refused with 503.
    let health: { status: number; body: Record<string, unknown> } | undefined;
    for (let i = 0; i < 40 && health?.body.status !== "draining"; i++) {
      const res = await fetch(`${a.url}/api/health`).catch(() => undefined);
      health = res ? { status: res.status, body: await res.json() } : health;
      if (health?.body.status !== "draining") await sleep(25);
    }
    expect(health).toMatchObject({ status: 503, body: { status: "draining" } });
    const refused = await postRun(
      a.url,
      later,
      runBody(later, undefined, "Refund ORD-7001 please."),
      "intake",
    );
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ code: "unavailable:draining" });
    expect(await prepared.sql.count("runs", "thread_id = $1", [later])).toBe(0);

    // Watch the run row: released (no owner), then taken over by B.
    let releasedAt = 0;
    let takenAt = 0;
    let finishedAt = 0;
    const watching = (async () => {
      while (Date.now() - termAt < LEASE_MS) {
        const row = await runRow(runId);
        if (!releasedAt && row?.owner === null) releasedAt = Date.now();
        if (!takenAt && row?.owner && row.owner !== ownerA) takenAt = Date.now();
        if (row?.status !== "running") {
          finishedAt = Date.now();
          return;
        }
        await sleep(20);
      }
    })();
    await done; // A ends the stream itself (a normal close), before it exits
    const exitAt = await a.exited;
    await watching;
    const figures = {
      exitAfterTermMs: exitAt - termAt,
      releasedAfterTermMs: releasedAt ? releasedAt - termAt : null,
      takeoverAfterExitMs: takenAt ? takenAt - exitAt : null,
      finishedAfterTermMs: finishedAt ? finishedAt - termAt : null,
    };
    console.log("[drain] takeover figures", figures);
    expect(figures.exitAfterTermMs).toBeLessThan(GRACE_MS + 3_000);
    expect(takenAt).toBeGreaterThan(0);
    expect(takenAt - exitAt).toBeLessThan(1_000);
    // Nobody waited for the lease: B finished it long before RUN_LEASE_MS.
    expect(finishedAt - termAt).toBeLessThan(LEASE_MS / 2);
    const row = await runRow(runId);
    expect(row?.status).toBe("interrupted");
    expect(row?.owner).not.toBe(ownerA);
    // Continued once, by B, from its last checkpoint (not run again by A).
    expect(await countCustomEvents(prepared.sql, "run_recovered", runId)).toBe(1);
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-7000'")).toBe(1);

    // The client of A reconnects to B with its last seq and reads the rest, gap-free, to RUN_FINISHED.
    expect(seen.some((e) => e.event.type === "RUN_FINISHED")).toBe(false);
    const lastSeq = seen.at(-1)!.seq;
    const rest: SseEvent[] = [];
    await readSse(
      `${b.url}/api/threads/${threadId}/events?after=${lastSeq}`,
      {},
      (e, stop) => {
        rest.push(e);
        if (e.event.type === "RUN_FINISHED") stop();
      },
      { maxMs: 10_000 },
    );
    expect(rest.map((e) => e.seq)).toEqual(rest.map((_, i) => lastSeq + 1 + i));
    expect(rest.at(-1)?.event.type).toBe("RUN_FINISHED");
  });

  it("lets a run that ends within the grace finish where it runs, then exits", async () => {
    const a = await start({ SHUTDOWN_GRACE_MS: "10000", CHAOS_REFUND_DELAY_MS: "1500" });
    const { threadId, interruptId } = await pausedAtApproval(a, "ORD-7002");
    const seen: SseEvent[] = [];
    let inRefund: () => void = () => {};
    const refunding = new Promise<void>((resolve) => {
      inRefund = resolve;
    });
    const { runId, done } = approve(a, threadId, interruptId, (e) => {
      seen.push(e);
      if (e.event.type === "STEP_STARTED" && e.event.stepName === "execute_refund") inRefund();
    });
    await refunding;
    const termAt = Date.now();
    a.terminate();
    await done;
    const exitAt = await a.exited;
    console.log(`[drain] run finished on its instance; exit ${exitAt - termAt} ms after SIGTERM`);
    // The stream carried the run to its end before the server closed it.
    expect(seen.at(-1)?.event.type).toBe("RUN_FINISHED");
    expect(await runRow(runId)).toMatchObject({ status: "interrupted", attempts: 1 });
    expect(exitAt - termAt).toBeLessThan(10_000);
  });
});
