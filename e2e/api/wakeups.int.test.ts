import pg from "pg";
import { authHeaders } from "../support/auth";
import type { TestServer } from "../support/server";
import { agentFor, answer, createTicket, postRun, runBody, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";
import { readSse, type SseEvent } from "./sse";

/*
 * Wake-ups (issue 31). A NOTIFY serializes its transaction's commit with every other notifying commit in the cluster,
 * so the runtime sends one only where a reader elsewhere needs it:
 * - a run streaming to its own client, with nobody following the thread from another instance, announces none of its
 *   event appends, and a whole ticket costs at most 6 notifications (counted by a LISTEN of this test's own);
 * - push and polling each suffice alone. A stream on instance B of a run executing on A hears the run to its end with
 *   B's polling off (push only: B follows the thread, so A's appends notify), and with B's LISTEN off (polling only).
 */
const CHANNELS = ["hitl_events", "inbox_changes", "hitl_runs", "hitl_auth"];
const SLOW_RUN = { OFFLINE_TOKEN_DELAY_MS: "60" };
const POLLING_OFF = { STREAM_POLL_MS: "600000", INBOX_FEED_POLL_MS: "600000" };

describe("wake-ups: a notification only where another instance needs it, push and polling each enough alone", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  const servers: TestServer[] = [];
  let listener: pg.Client;
  const heard: Record<string, number> = {};

  beforeAll(async () => {
    prepared = await prepareDatabase("wakeups");
    listener = new pg.Client({ connectionString: prepared.url });
    await listener.connect();
    listener.on("notification", (n) => {
      heard[n.channel] = (heard[n.channel] ?? 0) + 1;
    });
    for (const channel of CHANNELS) await listener.query(`LISTEN ${channel}`);
  });
  afterAll(async () => {
    await listener?.end();
    await cleanUp(servers, prepared);
  });

  it("one ticket on one instance, nobody following from elsewhere: no event announced, at most 6 notifications", async () => {
    const server = await startTestServer({ databaseUrl: prepared.url });
    servers.push(server);
    const message = "My headphones from ORD-1002 are broken, please refund them.";
    const threadId = await createTicket(server.url, message);
    for (const channel of CHANNELS) heard[channel] = 0;
    const agent = agentFor(server.url, threadId);
    const first = await runOnce(agent, { message });
    const second = await runOnce(agent, { resume: [answer(first.interrupts[0]!, { decision: "approve" })] });
    const third = await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "send" })] });
    expect(third.finished).toBeDefined();
    // Notifications are delivered after their commits: give the last ones a moment to arrive.
    await new Promise((r) => setTimeout(r, 500));
    const total = Object.values(heard).reduce((a, b) => a + b, 0);
    console.log(`[wake-ups] one ticket: ${JSON.stringify(heard)} (${total} notifications)`);
    expect(heard.hitl_events).toBe(0);
    expect(total).toBeLessThanOrEqual(6);
    await server.stop();
  });

  /** Start a slow run on `a` and follow it from `b` while it runs: the events `b`'s stream delivered. */
  async function followFromElsewhere(a: TestServer, b: TestServer): Promise<SseEvent[]> {
    const message = "Hi, where is my parcel? It has been two weeks.";
    const threadId = await createTicket(a.url, message);
    const body = runBody(threadId, undefined, message);
    const running = postRun(a.url, threadId, body, "intake");
    // Attach on B once the run is under way on A.
    for (;;) {
      const view = await (
        await fetch(`${b.url}/api/threads/${threadId}`, { headers: await authHeaders(b.url, "viewer") })
      ).json();
      if (view.activeRunId) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const events: SseEvent[] = [];
    await readSse(
      `${b.url}/api/threads/${threadId}/events?after=0`,
      {},
      (e, stop) => {
        events.push(e);
        if (e.event.type === "RUN_FINISHED" || e.event.type === "RUN_ERROR") stop();
      },
      { maxMs: 60_000 },
    );
    await running;
    return events;
  }

  it.each([
    ["push only (B's polling off)", POLLING_OFF],
    ["polling only (B does not LISTEN)", { DATABASE_POOLER: "transaction" }],
  ] as const)("a stream on B follows a run executing on A to its end: %s", async (_mode, bEnv) => {
    const a = await startTestServer({ databaseUrl: prepared.url, env: SLOW_RUN });
    const b = await startTestServer({ databaseUrl: prepared.url, env: { ...bEnv } });
    servers.push(a, b);
    const events = await followFromElsewhere(a, b);
    const types = events.map((e) => e.event.type);
    expect(types).toContain("TEXT_MESSAGE_CONTENT");
    expect(types.at(-1)).toBe("RUN_FINISHED");
    // In order, none twice.
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    await Promise.all([a.stop(), b.stop()]);
  });
});
