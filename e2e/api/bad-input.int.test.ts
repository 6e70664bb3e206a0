import { authedFetch } from "../support/auth";
import type { TestServer } from "../support/server";
import { pausedTicket, postRun } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/** Refusals before the stream starts: status, stable code, and nothing written. */
describe("bad input to the run endpoint", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;
  let paused: { threadId: string; interruptId: string };
  let other: { threadId: string; interruptId: string };
  let resolved: { threadId: string; interruptId: string };

  const pause = (order: string) => pausedTicket(server!.url, order);

  beforeAll(async () => {
    prepared = await prepareDatabase("bad", { prefix: "ORD-8", count: 3 });
    server = await startTestServer({ databaseUrl: prepared.url });
    [paused, other, resolved] = await Promise.all([pause("ORD-8000"), pause("ORD-8001"), pause("ORD-8002")]);
    const done = await postRun(
      server.url,
      resolved.threadId,
      body(resolved.threadId, [ok(resolved.interruptId)]),
    );
    expect(done.status).toBe(200);
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
  });

  /** Everything a refused request must leave alone. */
  async function snapshot() {
    const counts = await prepared.sql.rows(
      `SELECT (SELECT count(*) FROM threads)::int AS threads, (SELECT count(*) FROM runs)::int AS runs,
        (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM refunds)::int AS refunds,
        (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM checkpoint.checkpoints)::int AS checkpoints,
        (SELECT string_agg(interrupt_id || ':' || status, ',' ORDER BY interrupt_id) FROM decisions) AS decisions`,
    );
    return counts[0];
  }

  function body(threadId: string, resume?: unknown[], extra: Record<string, unknown> = {}) {
    return {
      threadId,
      runId: crypto.randomUUID(),
      messages: [],
      tools: [],
      context: [],
      ...(resume ? { resume } : {}),
      ...extra,
    };
  }
  const ok = (interruptId: string) => ({ interruptId, status: "resolved", payload: { decision: "approve" } });

  const cases: [string, () => [string, unknown], number, string][] = [
    ["malformed JSON", () => [paused.threadId, "{not json"], 400, "bad_request:json"],
    [
      "a body that is not a RunAgentInput",
      () => [paused.threadId, { hello: "world" }],
      400,
      "bad_request:run_input",
    ],
    [
      "a threadId that does not match the URL",
      () => [paused.threadId, body(other.threadId, [ok(paused.interruptId)])],
      400,
      "bad_request:thread_mismatch",
    ],
    [
      "an unknown thread",
      () => ["no-such-thread", body("no-such-thread", [ok(paused.interruptId)])],
      404,
      "not_found:thread",
    ],
    [
      "an unknown interrupt id",
      () => [paused.threadId, body(paused.threadId, [ok("0".repeat(32))])],
      404,
      "not_found:interrupt",
    ],
    [
      "an already-resolved interrupt",
      () => [resolved.threadId, body(resolved.threadId, [ok(resolved.interruptId)])],
      409,
      "conflict:interrupt_resolved",
    ],
    [
      "an interrupt of another thread",
      () => [paused.threadId, body(paused.threadId, [ok(other.interruptId)])],
      422,
      "unprocessable:interrupt_thread",
    ],
    [
      "the same interrupt answered twice",
      () => [paused.threadId, body(paused.threadId, [ok(paused.interruptId), ok(paused.interruptId)])],
      400,
      "bad_request:resume_duplicate",
    ],
    [
      "an answer that does not match the action's schema",
      () => [
        paused.threadId,
        body(paused.threadId, [
          { interruptId: paused.interruptId, status: "resolved", payload: { decision: "maybe" } },
        ]),
      ],
      422,
      "unprocessable:answer",
    ],
    [
      "a partial refund above the requested amount",
      () => [
        paused.threadId,
        body(paused.threadId, [
          {
            interruptId: paused.interruptId,
            status: "resolved",
            payload: { decision: "approve_partial", amountCents: 99_999_999 },
          },
        ]),
      ],
      422,
      "unprocessable:answer",
    ],
    [
      "new input while an interrupt is pending",
      () => [
        paused.threadId,
        body(paused.threadId, undefined, { messages: [{ id: "m1", role: "user", content: "hello?" }] }),
      ],
      409,
      "conflict:interrupt_pending",
    ],
  ];

  it.each(cases)("refuses %s with %i and writes nothing", async (_name, make, status, code) => {
    const before = await snapshot();
    const [threadId, payload] = make();
    const res = await postRun(server!.url, threadId, payload);
    expect(res.status).toBe(status);
    expect(res.json?.code).toBe(code);
    expect(typeof res.json?.message).toBe("string");
    expect(await snapshot()).toEqual(before);
  });

  it("refuses a resume that does not answer every pending interrupt, and writes nothing", async () => {
    // The refund graph raises one interrupt at a time; a second pending decision is recorded directly here.
    await prepared.sql.rows(
      `INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload)
       SELECT 'extra-' || interrupt_id, thread_id, run_id, checkpoint_id, 'input_text', payload FROM decisions
       WHERE interrupt_id = $1`,
      [paused.interruptId],
    );
    const before = await snapshot();
    const res = await postRun(server!.url, paused.threadId, body(paused.threadId, [ok(paused.interruptId)]));
    expect(res.status).toBe(422);
    expect(res.json?.code).toBe("unprocessable:resume_incomplete");
    const details = res.json?.details as { missing: { interruptId: string }[] } | undefined;
    expect(details?.missing).toEqual([{ interruptId: `extra-${paused.interruptId}`, action: "input_text" }]);
    expect(await snapshot()).toEqual(before);
    await prepared.sql.rows("DELETE FROM decisions WHERE interrupt_id = $1", [`extra-${paused.interruptId}`]);
  });

  it("refuses cross-site requests from a browser with 403 forbidden:cross_site and writes nothing", async () => {
    const before = await snapshot();
    const crossSite: Record<string, string>[] = [
      { origin: "http://evil.example" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
    ];
    for (const headers of crossSite) {
      const ticket = await authedFetch(`${server!.url}/api/threads`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ message: "refund ORD-1002" }),
      });
      expect(ticket.status).toBe(403);
      expect((await ticket.json()).code).toBe("forbidden:cross_site");
      const run = await authedFetch(`${server!.url}/api/threads/${paused.threadId}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body(paused.threadId, [ok(paused.interruptId)])),
      });
      expect(run.status).toBe(403);
      const fork = await authedFetch(`${server!.url}/api/threads/${paused.threadId}/fork`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ checkpointId: "x" }),
      });
      expect(fork.status).toBe(403);
    }
    expect(await snapshot()).toEqual(before);
    // The same origin is fine (the console itself).
    const same = await authedFetch(`${server!.url}/api/threads`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server!.url, "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ message: "Refund ORD-1002 please" }),
    });
    expect(same.status).toBe(201);
  });

  it("sends security headers: a CSP without unsafe-eval, no framing, no sniffing", async () => {
    const res = await authedFetch(`${server!.url}/`);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-eval");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
  });

  it("refuses a bad ticket with 400 bad_request:thread and creates nothing", async () => {
    const before = await snapshot();
    for (const bad of [{}, { message: "" }, { message: "hi", orderRef: "12345" }]) {
      const res = await authedFetch(`${server!.url}/api/threads`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(bad),
      });
      expect(res.status).toBe(400);
      expect((await res.json()).code).toBe("bad_request:thread");
    }
    expect(await snapshot()).toEqual(before);
  });
});
