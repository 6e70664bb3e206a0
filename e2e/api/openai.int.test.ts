import type { TextMessageContentEvent } from "@ag-ui/core";
import { authedFetch } from "../support/auth";
import { type FakeOpenAI, refundAgentReplies, startFakeOpenAI } from "../support/fake-openai";
import type { TestServer } from "../support/server";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

const REPLY_TOKENS = ["Dear", " Lars,", " your", " refund", " of", " €249.00", " is", " on", " its", " way."];

/** With OPENAI_API_KEY the server's model calls go to an OpenAI-compatible endpoint; its tokens reach the browser. */
describe("the OpenAI-compatible model path", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;
  let fake: FakeOpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.setReply(refundAgentReplies(REPLY_TOKENS, "headphones stopped working"));
    prepared = await prepareDatabase("openai");
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: {
        OPENAI_API_KEY: "test-key",
        OPENAI_BASE_URL: fake.baseURL,
        OPENAI_MODEL: "fake-model",
        OPENAI_MAX_RETRIES: "0",
      },
    });
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
    await fake.close();
  });

  it("streams the model's tokens as TEXT_MESSAGE_CONTENT events", async () => {
    // The customer names the order: an order number only the model came up with would wait for a person to check
    // that the sender is its customer (lib/agents/refund/nodes/intake.ts).
    const message = "My headphones from ORD-1002 stopped working. Refund please.";
    const threadId = await createTicket(server!.url, message);
    const agent = agentFor(server!.url, threadId);
    const first = await runOnce(agent, { message });
    expect(first.interrupts[0]?.reason).toBe("refund_approval");
    expect(fake.requests.some((r) => r.model === "fake-model")).toBe(true);

    const second = await runOnce(agent, { resume: [answer(first.interrupts[0]!, { decision: "approve" })] });
    const deltas = second.events
      .filter((e): e is TextMessageContentEvent => e.type === "TEXT_MESSAGE_CONTENT")
      .map((e) => e.delta);
    expect(deltas).toEqual(REPLY_TOKENS);
    expect(second.interrupts[0]?.reason).toBe("confirm_email");
    // The classifier's JSON never reaches the browser as assistant text.
    expect(first.events.some((e) => e.type === "TEXT_MESSAGE_CONTENT")).toBe(false);
  });

  it("reports a model failure after the stream started as RUN_ERROR, and closes the stream", async () => {
    const message = "The laptop from ORD-1008 will not start. Refund please.";
    const threadId = await createTicket(server!.url, message);
    const agent = agentFor(server!.url, threadId);
    const first = await runOnce(agent, { message });
    expect(first.interrupts[0]?.reason).toBe("refund_approval");
    fake.setFailure(500);
    try {
      const started = Date.now();
      const res = await authedFetch(`${server!.url}/api/threads/${threadId}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({
          threadId,
          runId: crypto.randomUUID(),
          messages: [],
          tools: [],
          context: [],
          resume: [
            { interruptId: first.interrupts[0]!.id, status: "resolved", payload: { decision: "approve" } },
          ],
        }),
      });
      expect(res.status).toBe(200);
      const text = await res.text(); // ends: the server closes the stream after RUN_ERROR
      expect(Date.now() - started).toBeLessThan(15_000);
      const events = text
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => JSON.parse(l.slice(6)) as { type: string; code?: string });
      expect(events[0]?.type).toBe("RUN_STARTED");
      expect(events[events.length - 1]).toMatchObject({ type: "RUN_ERROR", code: "internal:run_failed" });
      const view = await (await authedFetch(`${server!.url}/api/threads/${threadId}`)).json();
      expect(view.status).toBe("failed");
      expect(view.activeRunId).toBeNull();
    } finally {
      fake.setFailure(null);
    }
    // Trying again (a run with no message on a failed thread) continues from the last checkpoint.
    const retry = await runOnce(agentFor(server!.url, threadId));
    expect(retry.interrupts.map((i) => i.reason)).toEqual(["confirm_email"]);
    expect(retry.events.map((e) => e.type)).toContain("TEXT_MESSAGE_CONTENT");
    // The refund recorded before the failure is the one the thread keeps: none was added by trying again.
    const view = await authedFetch(`${server!.url}/api/threads/${threadId}`).then((r) => r.json());
    expect(await prepared.sql.count("refunds", "order_id = $1", [view.values.refund.orderId])).toBe(1);
  });
});
