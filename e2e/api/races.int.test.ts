import { waitForEffectsToSettle } from "../chaos/effects";
import { emailOf } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import type { TestServer } from "../support/server";
import { agentFor, createTicket, postRun, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

const THREADS = 50;

/** Pause `n` threads at refund approval, one per order ORD-7<offset + i>, a few at a time. */
async function pausedThreads(server: TestServer, offset: number, n: number) {
  const out: { threadId: string; interruptId: string }[] = [];
  const queue = Array.from({ length: n }, (_, i) => `ORD-7${String(offset + i).padStart(3, "0")}`);
  async function worker() {
    for (let order = queue.shift(); order; order = queue.shift()) {
      const message = `Please refund ${order}, the television is broken.`;
      const threadId = await createTicket(server.url, message);
      const run = await runOnce(agentFor(server.url, threadId), { message });
      const interrupt = run.interrupts[0];
      if (interrupt?.reason !== "refund_approval")
        throw new Error(`${order}: expected approval, got ${interrupt?.reason}`);
      out.push({ threadId, interruptId: interrupt.id });
    }
  }
  await Promise.all(Array.from({ length: 5 }, worker));
  return out;
}

function resumeBody(threadId: string, interruptId: string) {
  return {
    threadId,
    runId: crypto.randomUUID(),
    messages: [],
    tools: [],
    context: [],
    resume: [{ interruptId, status: "resolved", payload: { decision: "approve" } }],
  };
}

/** Fire two resumes of the same interrupt at once (to `a` and `b`) for every thread; return both outcomes. */
async function raceAll(threads: { threadId: string; interruptId: string }[], a: TestServer, b: TestServer) {
  return Promise.all(
    threads.map(async ({ threadId, interruptId }) => {
      const [first, second] = await Promise.all([
        // Two people: a supervisor and an operator (the refunds are at the four-eyes limit, not above it).
        postRun(a.url, threadId, resumeBody(threadId, interruptId), "supervisor"),
        postRun(b.url, threadId, resumeBody(threadId, interruptId), "operator"),
      ]);
      return { threadId, results: [first, second] };
    }),
  );
}

function expectOneWinner(outcomes: Awaited<ReturnType<typeof raceAll>>) {
  for (const { results } of outcomes) {
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    const winner = results.find((r) => r.status === 200)!;
    const loser = results.find((r) => r.status === 409)!;
    expect(winner.text).toContain('"type":"RUN_FINISHED"');
    expect(loser.json?.code).toBe("conflict:interrupt_resolved");
    const details = loser.json?.details as { resolvedBy?: string; resolvedAt?: string };
    expect([emailOf("supervisor"), emailOf("operator")]).toContain(details.resolvedBy);
    expect(Number.isNaN(Date.parse(details.resolvedAt ?? ""))).toBe(false);
  }
}

/** Refunds the fake provider created per order in `orders` (provider-side, not our rows): order → count. */
function providerRefunds(provider: FakePaymentProvider, orders: string[]) {
  return orders.map((order) => [order, provider.created.filter((c) => c.orderId === order).length]);
}

const ordersFrom = (offset: number) =>
  Array.from({ length: THREADS }, (_, i) => `ORD-7${String(offset + i).padStart(3, "0")}`);

describe("one winner per decision", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let serverA: TestServer | undefined;
  let serverB: TestServer | undefined;
  let provider: FakePaymentProvider;

  beforeAll(async () => {
    prepared = await prepareDatabase("race", { prefix: "ORD-7", count: THREADS * 2 });
    // Both servers pay through one provider over HTTP: what it created is what was paid.
    provider = await startFakePaymentProvider();
    const env = { PAYMENT_URL: provider.url, EFFECT_POLL_MS: "100" };
    [serverA, serverB] = await Promise.all([
      startTestServer({ databaseUrl: prepared.url, env }),
      startTestServer({ databaseUrl: prepared.url, env }),
    ]);
  });
  afterAll(async () => {
    await cleanUp([serverA, serverB], prepared);
    await provider?.close();
  });

  it(`resolves each of ${THREADS} interrupts once when two requests race within one server`, async () => {
    const threads = await pausedThreads(serverA!, 0, THREADS);
    expectOneWinner(await raceAll(threads, serverA!, serverA!));
    expect(await prepared.sql.count("refunds", "order_id BETWEEN 'ORD-7000' AND 'ORD-7049'")).toBe(THREADS);
    await waitForEffectsToSettle(prepared.sql, 30_000);
    // Counted at the provider: each approved refund paid exactly once (0 duplicates, 0 missing).
    expect(providerRefunds(provider, ordersFrom(0))).toEqual(ordersFrom(0).map((o) => [o, 1]));
  });

  it(`resolves each of ${THREADS} interrupts once when the requests race across two server processes`, async () => {
    const threads = await pausedThreads(serverA!, THREADS, THREADS);
    expectOneWinner(await raceAll(threads, serverA!, serverB!));
    expect(await prepared.sql.count("refunds", "order_id BETWEEN 'ORD-7050' AND 'ORD-7099'")).toBe(THREADS);
    // Two dispatchers (one per server) share the effects: neither pays one the other paid.
    await waitForEffectsToSettle(prepared.sql, 30_000);
    expect(providerRefunds(provider, ordersFrom(THREADS))).toEqual(ordersFrom(THREADS).map((o) => [o, 1]));
    expect(provider.created).toHaveLength(2 * THREADS);
  });

  it("never records two refunds for one order, and every decision has one resolver", async () => {
    const doubles = await prepared.sql.rows(
      "SELECT order_id FROM refunds GROUP BY order_id HAVING count(*) > 1",
    );
    expect(doubles).toEqual([]);
    const unresolved = await prepared.sql.count(
      "decisions",
      "action = 'refund_approval' AND status <> 'resolved'",
    );
    expect(unresolved).toBe(0);
    const runs = await prepared.sql.rows<{ n: number }>(
      "SELECT count(*)::int AS n FROM runs WHERE kind = 'resume' GROUP BY thread_id HAVING count(*) > 1",
    );
    expect(runs).toEqual([]);
  });
});
