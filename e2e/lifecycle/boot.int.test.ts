import { randomUUID } from "node:crypto";
import { agentFor, createTicket, runOnce } from "../api/client";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import type { TestServer } from "../support/server";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy";

const SWEEP_MS = 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Recovery, heartbeat and LISTEN start as soon as the database is reachable, and work again after it comes back.
 * Postgres is made unreachable by a proxy between the server and it (the machine's PostgreSQL is never stopped).
 */
describe("start and restart with the database", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let proxy: TcpProxy;
  let server: TestServer | undefined;
  const paused: { threadId: string; interruptId: string }[] = [];

  beforeAll(async () => {
    prepared = await prepareDatabase("boot");
    const target = new URL(prepared.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    // Two threads paused at their approval, made by a server that is then stopped.
    const maker = await startTestServer({ databaseUrl: prepared.url });
    try {
      for (const order of ["ORD-1002", "ORD-1008"]) {
        const message = `Refund ${order} please, it broke.`;
        const threadId = await createTicket(maker.url, message);
        const first = await runOnce(agentFor(maker.url, threadId), { message });
        paused.push({ threadId, interruptId: first.interrupts[0]!.id });
      }
    } finally {
      await maker.stop();
    }
  });
  afterAll(async () => {
    await server?.kill();
    await proxy?.close();
    await cleanUp([], prepared);
  });

  /** A resume run claimed by a process that died (an instance id nobody has), its lease long expired. */
  async function orphanedResume({ threadId, interruptId }: { threadId: string; interruptId: string }) {
    const runId = randomUUID();
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
       VALUES ($1, $2, 'resume', 'running', $3, $4, now() - interval '1 minute', 1, now())`,
      [runId, threadId, JSON.stringify(input), randomUUID()],
    );
    await prepared.sql.rows("UPDATE threads SET status = 'running' WHERE id = $1", [threadId]);
    return runId;
  }

  async function runStatus(runId: string) {
    const [row] = await prepared.sql.rows<{ status: string }>("SELECT status FROM runs WHERE id = $1", [
      runId,
    ]);
    return row?.status;
  }

  /** Poll until the run left `running`; the time it took from `since`, in ms. */
  async function finished(runId: string, since: number, withinMs: number) {
    while (Date.now() - since < withinMs) {
      if ((await runStatus(runId)) !== "running") return Date.now() - since;
      await sleep(50);
    }
    return Number.POSITIVE_INFINITY;
  }

  async function health() {
    const res = await fetch(`${server!.url}/api/health`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const lines = (pattern: RegExp) =>
    server!
      .log()
      .split("\n")
      .filter((l) => pattern.test(l)).length;

  it("boots with Postgres unreachable, says degraded, and recovers an orphaned run within 2 sweeps once it is reachable", async () => {
    const runId = await orphanedResume(paused[0]!);
    server = await startTestServer({
      databaseUrl: proxy.urlFor(prepared.url),
      env: { RUN_LEASE_MS: "30000", RUN_SWEEP_INTERVAL_MS: String(SWEEP_MS) },
      signIn: false,
      waitFor: "listening",
    });
    const down = await health();
    expect(down.status).toBe(503);
    // Soft: what the health body says is checked, but the recovery below is the point.
    expect.soft(down.body).toMatchObject({ ok: false, status: "degraded", code: "unavailable:database" });
    expect.soft(typeof down.body.reason).toBe("string");
    // Several attempts while it stays down, but one line saying so.
    await sleep(2.5 * SWEEP_MS);
    expect(proxy.refused()).toBeGreaterThanOrEqual(3);
    expect(await runStatus(runId)).toBe("running");
    expect.soft(lines(/database unreachable/i)).toBe(1);

    proxy.forward();
    const tookMs = await finished(runId, Date.now(), 4 * SWEEP_MS);
    console.log(`[boot] orphaned run finished ${tookMs} ms after Postgres became reachable`);
    expect(tookMs).toBeLessThan(2 * SWEEP_MS);
    expect(await runStatus(runId)).toBe("interrupted");
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-1002'")).toBe(1);
    expect((await health()).status).toBe(200);
    expect(lines(/database reachable/i)).toBe(1);
  });

  it("goes degraded when Postgres goes away, and recovers an orphaned run within 2 sweeps after it comes back", async () => {
    expect(server).toBeDefined();
    proxy.refuse();
    const before = lines(/unreachable/i);
    const runId = await orphanedResume(paused[1]!);
    await sleep(2.5 * SWEEP_MS);
    const down = await health();
    expect(down.status).toBe(503);
    expect.soft(down.body).toMatchObject({ ok: false, status: "degraded" });
    expect(await runStatus(runId)).toBe("running");
    // Each background task says once that it lost the database, not once per attempt.
    const said = server!
      .log()
      .split("\n")
      .filter((l) => /unreachable/i.test(l))
      .slice(before);
    expect(new Set(said.map((l) => l.split("]")[0])).size).toBe(said.length);

    proxy.forward();
    const tookMs = await finished(runId, Date.now(), 4 * SWEEP_MS);
    console.log(`[boot] orphaned run finished ${tookMs} ms after Postgres came back`);
    expect(tookMs).toBeLessThan(2 * SWEEP_MS);
    expect(await runStatus(runId)).toBe("interrupted");
    const deadline = Date.now() + 5_000;
    while ((await health()).status !== 200 && Date.now() < deadline) await sleep(100);
    expect((await health()).status).toBe(200);
  });
});
