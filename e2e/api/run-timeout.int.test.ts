import { authedFetch } from "../support/auth";
import { type FakeOpenAI, refundAgentReplies, startFakeOpenAI } from "../support/fake-openai";
import type { TestServer } from "../support/server";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/*
 * Run control, timeouts (issue 32): a model call has a timeout (MODEL_TIMEOUT_MS), retried with back-off up to
 * OPENAI_MAX_RETRIES; a run has a wall-clock limit (RUN_MAX_MS). Either way the run ends `timed_out` with a RUN_ERROR
 * in the operator's words, the thread at its last checkpoint, counted in the runs metric — and "Try again" continues.
 */
describe("run timeouts", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let fake: FakeOpenAI;
  let model: TestServer | undefined;
  let slow: TestServer | undefined;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.setReply(refundAgentReplies("Dear customer, your refund is on its way.", "it broke"));
    prepared = await prepareDatabase("timeouts");
    model = await startTestServer({
      databaseUrl: prepared.url,
      env: {
        OPENAI_API_KEY: "test-key",
        OPENAI_BASE_URL: fake.baseURL,
        OPENAI_MODEL: "fake-model",
        OPENAI_MAX_RETRIES: "1",
        MODEL_TIMEOUT_MS: "400",
      },
    });
  });
  afterAll(async () => {
    await cleanUp([model, slow], prepared);
    await fake.close();
  });

  const runRow = (threadId: string) =>
    prepared.sql.rows<{ status: string; error_code: string | null }>(
      "SELECT status, error_code FROM runs WHERE thread_id = $1 ORDER BY created_at DESC LIMIT 1",
      [threadId],
    );

  async function timedOutRuns(base: string): Promise<number> {
    const text = await (await authedFetch(`${base}/api/metrics`, {}, "admin")).text();
    const line = text
      .split("\n")
      .find((l) => l.startsWith("hitl_runs_total{") && l.includes('outcome="timed_out"'));
    return line ? Number(line.split(" ").at(-1)) : 0;
  }

  it("a model that never answers: each call times out, is retried, then the run ends timed_out; Try again continues", async () => {
    const message = "Refund ORD-1002 please, the headphones broke.";
    const threadId = await createTicket(model!.url, message);
    fake.setHang(true);
    const before = fake.requests.length;
    const started = Date.now();
    const first = await runOnce(agentFor(model!.url, threadId), { message });
    const error = first.events.find((e) => e.type === "RUN_ERROR") as
      | { code?: string; message?: string }
      | undefined;
    expect(error?.code).toBe("unavailable:model_timeout");
    expect(error?.message).toMatch(/did not answer within/);
    // One call and one retry, each abandoned after its timeout: the run did not hang.
    expect(fake.requests.length - before).toBe(2);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await runRow(threadId)).toEqual([
      { status: "timed_out", error_code: "unavailable:model_timeout" },
    ]);
    const view = await (await authedFetch(`${model!.url}/api/threads/${threadId}`)).json();
    expect(view.status).toBe("failed");
    expect(await timedOutRuns(model!.url)).toBeGreaterThanOrEqual(1);

    fake.setHang(false);
    const again = await runOnce(agentFor(model!.url, threadId), {});
    expect(again.interrupts.map((i) => i.reason)).toEqual(["refund_approval"]);
  });

  it("a run past its wall-clock limit is stopped at once and ends timed_out, what it recorded kept", async () => {
    // Paused at its approval through the first server; then a server whose offline model writes slowly and whose
    // runs are limited to 1.5 s takes the approval: the reply cannot be finished in one run.
    const message = "Refund ORD-1008 please, the laptop broke.";
    const threadId = await createTicket(model!.url, message);
    const first = await runOnce(agentFor(model!.url, threadId), { message });
    const approval = first.interrupts[0];
    if (!approval) throw new Error(`no approval: ${first.events.map((e) => e.type)}`);
    await model?.stop();
    model = undefined;
    slow = await startTestServer({
      databaseUrl: prepared.url,
      env: { OFFLINE_TOKEN_DELAY_MS: "400", RUN_MAX_MS: "1500" },
    });
    const started = Date.now();
    const second = await runOnce(agentFor(slow.url, threadId), {
      resume: [answer(approval, { decision: "approve" })],
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    const error = second.events.find((e) => e.type === "RUN_ERROR") as
      | { code?: string; message?: string }
      | undefined;
    expect(error?.code).toBe("unavailable:run_timeout");
    expect(error?.message).toMatch(/longer than its limit of 2 s|longer than its limit of 1 s/);
    expect(await runRow(threadId)).toEqual([{ status: "timed_out", error_code: "unavailable:run_timeout" }]);
    expect(await timedOutRuns(slow.url)).toBeGreaterThanOrEqual(1);
    // The refund was recorded before the reply was being written: paid once, whatever follows.
    expect(await prepared.sql.count("refunds", "order_id = 'ORD-1008'")).toBe(1);
  });
});
