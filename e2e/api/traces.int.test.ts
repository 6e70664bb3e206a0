import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver";
import type { TestServer } from "../support/server";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MESSAGE = "Refund ORD-7000 please, the television arrived broken.";

/**
 * Traces of one refund thread, exported by OTLP to a receiver in this process: one trace per run (its id on the run
 * row), the claim, every graph node, the model calls, the saver calls and the delivery of the run's side effects as
 * one tree under the run's root span. And the server's log: JSON lines carrying the run's ids, no message bodies.
 */
describe("traces and logs of one refund thread", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    prepared = await prepareDatabase("traces", { prefix: "ORD-7", count: 2 });
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: "100",
        EFFECT_POLL_MS: "100",
      },
    });
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
    await receiver?.close();
  });

  it("exports one span tree per run: claim, nodes, model calls, saver calls, effect deliveries", async () => {
    const threadId = await createTicket(server!.url, MESSAGE);
    const agent = agentFor(server!.url, threadId);
    const first = await runOnce(agent, { message: MESSAGE });
    const second = await runOnce(agent, { resume: [answer(first.interrupts[0]!, { decision: "approve" })] });
    await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "send" })] });

    const runs = await prepared.sql.rows<{
      id: string;
      kind: string;
      trace_id: string;
      trace_span_id: string;
    }>("SELECT id, kind, trace_id, trace_span_id FROM runs WHERE thread_id = $1 ORDER BY created_at", [
      threadId,
    ]);
    expect(runs.map((r) => r.kind)).toEqual(["input", "resume", "resume"]);
    for (const run of runs) {
      expect(run.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(run.trace_span_id).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(new Set(runs.map((r) => r.trace_id)).size).toBe(3);

    // Wait for the exports: the payment and the email are delivered after their runs, then batched out.
    const [input, approve, send] = runs as [(typeof runs)[0], (typeof runs)[0], (typeof runs)[0]];
    const has = (traceId: string, name: string) =>
      receiver.spans.some((s) => s.traceId === traceId && s.name === name);
    const deadline = Date.now() + 20_000;
    while (
      !(
        has(approve.trace_id, "effect payment") &&
        has(send.trace_id, "effect email") &&
        runs.every((r) => has(r.trace_id, "run"))
      )
    ) {
      if (Date.now() > deadline) throw new Error(`spans missing; got ${names(receiver.spans).join(", ")}`);
      await sleep(200);
    }

    for (const run of runs) {
      const spans = receiver.spans.filter((s) => s.traceId === run.trace_id);
      // One root, the run span whose ids the run row holds; every other span hangs under it.
      const roots = spans.filter((s) => !s.parentSpanId);
      expect(roots.map((s) => [s.name, s.spanId])).toEqual([["run", run.trace_span_id]]);
      expect(roots[0]?.attributes["run.id"]).toBe(run.id);
      expect(roots[0]?.service).toBe("hitl-console");
      const ids = new Set(spans.map((s) => s.spanId));
      for (const span of spans.filter((s) => s.parentSpanId)) expect(ids.has(span.parentSpanId!)).toBe(true);
      // The claim is the run's first child; the saver wrote its checkpoints inside the trace.
      expect(children(spans, run.trace_span_id).map((s) => s.name)).toContain("claim");
      expect(names(spans)).toEqual(expect.arrayContaining(["saver put", "saver putWrites"]));
    }

    const nodesOf = (traceId: string) =>
      receiver.spans
        .filter((s) => s.traceId === traceId && s.name.startsWith("node "))
        .map((s) => s.name.slice(5));
    expect(nodesOf(input.trace_id)).toEqual(
      expect.arrayContaining(["classify", "lookup_order", "check_policy", "human_review"]),
    );
    expect(nodesOf(approve.trace_id)).toEqual(
      expect.arrayContaining(["human_review", "execute_refund", "write_reply", "confirm_email"]),
    );
    expect(nodesOf(send.trace_id)).toEqual(expect.arrayContaining(["confirm_email", "send_email"]));
    // Node spans are direct children of the run span.
    for (const run of runs) {
      for (const node of receiver.spans.filter(
        (s) => s.traceId === run.trace_id && s.name.startsWith("node "),
      )) {
        expect(node.parentSpanId).toBe(run.trace_span_id);
      }
    }

    // The model calls sit inside the nodes that made them, with the model named.
    const llm = receiver.spans.filter((s) => s.name.startsWith("llm "));
    expect(llm.length).toBeGreaterThan(0);
    for (const call of llm) {
      const parent = receiver.spans.find((s) => s.spanId === call.parentSpanId);
      expect(parent?.name.startsWith("node ")).toBe(true);
      expect(typeof call.attributes["gen_ai.request.model"]).toBe("string");
    }
    expect(llm.some((s) => s.traceId === approve.trace_id)).toBe(true); // the reply writer

    // Deliveries join the trace of the run that recorded them, under its root span.
    const payment = receiver.spans.find((s) => s.name === "effect payment");
    expect(payment).toMatchObject({ traceId: approve.trace_id, parentSpanId: approve.trace_span_id });
    const email = receiver.spans.find((s) => s.name === "effect email");
    expect(email).toMatchObject({ traceId: send.trace_id, parentSpanId: send.trace_span_id });

    // The log: JSON lines; those about these runs carry the run's trace id; no customer words at info.
    const lines = server!
      .log()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines)
      expect(["trace", "debug", "info", "warn", "error", "fatal"]).toContain(line.level);
    for (const run of runs) {
      const about = lines.filter((l) => l.runId === run.id);
      expect(about.map((l) => l.msg)).toEqual(
        expect.arrayContaining(["run claimed", "run started", "run finished"]),
      );
      for (const line of about) {
        expect(line).toMatchObject({ threadId, traceId: run.trace_id });
      }
    }
    // Libraries log through the same logger: no coloured text lines from better-auth (its base-URL warning at
    // every start was one).
    expect(server!.log()).not.toContain("Better Auth]");
    expect(server!.log()).not.toContain("Base URL is not set");
    expect(server!.log()).not.toContain("television arrived broken");
    expect(server!.log()).not.toContain("customer0@example.com");
  });
});

function names(spans: ReceivedSpan[]): string[] {
  return [...new Set(spans.map((s) => s.name))].sort();
}

function children(spans: ReceivedSpan[], parent: string): ReceivedSpan[] {
  return spans.filter((s) => s.parentSpanId === parent);
}
