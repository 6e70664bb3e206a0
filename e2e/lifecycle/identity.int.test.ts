import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { createTicket, runBody } from "../api/client";
import { countCustomEvents } from "../api/sealed";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { readSse, type SseEvent } from "../api/sse";
import { authHeaders } from "../support/auth";
import type { TestServer } from "../support/server";

/**
 * Replicas in separate containers share a hostname and are each pid 1 of their own pid namespace. Here each server
 * runs as pid 1 of a fresh pid namespace (`unshare`, root or user namespaces needed), on the same host: same
 * hostname, same pid. Both run long runs side by side; neither may take the other's over.
 */
const UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"];
const canUnshare = spawnSync(UNSHARE[0]!, [...UNSHARE.slice(1), "true"]).status === 0;

/** The ticket's first run (as the intake key), streamed to its pause; the approval's interrupt id. */
async function firstPause(server: TestServer, threadId: string, message: string): Promise<string> {
  let interruptId = "";
  await readSse(
    `${server.url}/api/threads/${threadId}/runs`,
    {
      method: "POST",
      headers: { "content-type": "application/json", ...(await authHeaders(server.url, "intake")) },
      body: JSON.stringify(runBody(threadId, undefined, message)),
    },
    (e) => {
      const outcome = e.event.outcome as { interrupts?: { id: string }[] } | undefined;
      if (e.event.type === "RUN_FINISHED") interruptId = outcome?.interrupts?.[0]?.id ?? "";
    },
    { maxMs: 8_000 },
  );
  return interruptId;
}

describe.skipIf(!canUnshare)("instance identity", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    prepared = await prepareDatabase("identity", { prefix: "ORD-6", count: 8 });
    const env = { RUN_LEASE_MS: "30000", RUN_SWEEP_INTERVAL_MS: "200", CHAOS_REFUND_DELAY_MS: "4000" };
    for (let i = 0; i < 2; i++) {
      servers.push(await startTestServer({ databaseUrl: prepared.url, env, wrap: UNSHARE }));
    }
  });
  afterAll(async () => {
    // SIGKILL: pid 1 of a namespace, and its namespace goes with it.
    await Promise.all(servers.map((s) => s.kill()));
    await cleanUp([], prepared);
  });

  it("two instances with the same hostname and pid never take over each other's live runs", async () => {
    const [a, b] = servers as [TestServer, TestServer];
    // Three threads per server paused at the approval, then all six approvals executing at once (each ≥ 4 s).
    const threads: { server: TestServer; threadId: string; interruptId: string; order: string }[] = [];
    for (const [i, server] of [a, a, a, b, b, b].entries()) {
      const order = `ORD-600${i}`;
      const message = `Refund ${order} please, it broke.`;
      const threadId = await createTicket(server.url, message);
      threads.push({ server, threadId, interruptId: await firstPause(server, threadId, message), order });
    }
    const started = Date.now();
    const streams = await Promise.all(
      threads.map(async ({ server, threadId, interruptId }) => {
        const events: SseEvent[] = [];
        const body = runBody(threadId, [
          { interruptId, status: "resolved", payload: { decision: "approve" } },
        ]);
        const status = await readSse(
          `${server.url}/api/threads/${threadId}/runs`,
          { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
          (e) => events.push(e),
          { maxMs: 30_000 },
        );
        return { status, events, runId: body.runId };
      }),
    );
    expect(Date.now() - started).toBeGreaterThan(4_000);

    const runs = await prepared.sql.rows<{
      id: string;
      thread_id: string;
      owner: string;
      attempts: number;
      status: string;
    }>("SELECT id, thread_id, owner, attempts, status FROM runs WHERE kind = 'resume'");
    const firstOwners = await prepared.sql.rows<{ thread_id: string; owner: string }>(
      "SELECT thread_id, owner FROM runs WHERE kind = 'input'",
    );
    const takeovers = await countCustomEvents(prepared.sql, "run_recovered");
    expect({ takeovers, reclaimed: runs.filter((r) => r.attempts !== 1).length }).toEqual({
      takeovers: 0,
      reclaimed: 0,
    });
    for (const s of streams) {
      expect(s.status).toBe(200);
      expect(s.events.at(-1)?.event.type).toBe("RUN_FINISHED");
    }
    // Each approval ran where it was started: by the instance that ran the thread's first run on the same server.
    for (const run of runs) {
      expect(run.status).toBe("interrupted");
      expect(run.owner).toBe(firstOwners.find((f) => f.thread_id === run.thread_id)?.owner);
    }
    expect(new Set(firstOwners.map((f) => f.owner)).size).toBe(2);
    for (const t of threads) expect(await prepared.sql.count("refunds", "order_id = $1", [t.order])).toBe(1);

    // The scenario held: both instances carry the same labels (host and pid), in two pid namespaces.
    const instances = await prepared.sql.rows<{ hostname: string; pid: number; pid_namespace: string }>(
      "SELECT hostname, pid, pid_namespace FROM instances WHERE id = ANY($1)",
      [firstOwners.map((f) => f.owner)],
    );
    expect(instances).toHaveLength(2);
    expect(instances.map((i) => i.hostname)).toEqual([hostname(), hostname()]);
    expect(instances[0]!.pid).toBe(instances[1]!.pid);
    expect(instances[0]!.pid_namespace).not.toBe(instances[1]!.pid_namespace);
  }, 240_000);
});

/** The fast path that stays: a process gone from this machine (a crash, a restart) does not hold its runs for a lease. */
describe("a crashed instance on this machine", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    prepared = await prepareDatabase("restart", { prefix: "ORD-6", count: 8 });
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    await cleanUp([], prepared);
  });

  it("has its runs taken over by the next instance at once, not when their 30 s lease expires", async () => {
    const env = { RUN_LEASE_MS: "30000", RUN_SWEEP_INTERVAL_MS: "200", CHAOS_REFUND_DELAY_MS: "3000" };
    const a = await startTestServer({ databaseUrl: prepared.url, env });
    servers.push(a);
    const message = "Refund ORD-6000 please, it broke.";
    const threadId = await createTicket(a.url, message);
    const interruptId = await firstPause(a, threadId, message);
    const body = runBody(threadId, [{ interruptId, status: "resolved", payload: { decision: "approve" } }]);
    await readSse(
      `${a.url}/api/threads/${threadId}/runs`,
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      (e, stop) => e.event.type === "STEP_STARTED" && e.event.stepName === "execute_refund" && stop(),
      { maxMs: 15_000 },
    );
    await a.kill();
    const b = await startTestServer({ databaseUrl: prepared.url, env });
    servers.push(b);
    const upAt = Date.now();
    let status = "running";
    while (status === "running" && Date.now() - upAt < 20_000) {
      await new Promise((r) => setTimeout(r, 50));
      [{ status = "running" } = {}] = await prepared.sql.rows<{ status: string }>(
        "SELECT status FROM runs WHERE id = $1",
        [body.runId],
      );
    }
    const tookMs = Date.now() - upAt;
    console.log(`[identity] killed instance's run finished ${tookMs} ms after the next instance was up`);
    expect(status).toBe("interrupted");
    // 3 s of the slow refund node again, and nothing waited for the lease.
    expect(tookMs).toBeLessThan(10_000);
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-6000'")).toBe(1);
  });
});
