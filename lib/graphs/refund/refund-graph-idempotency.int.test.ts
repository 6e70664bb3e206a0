import { Command } from "@langchain/langgraph";
import {
  answer,
  countRows,
  expectWaitingFor,
  openRefundHarness,
  type RefundHarness,
  startThread,
  type ThreadConfig,
  valuesOf,
} from "@/e2e/support/refund-harness";

/** Run an approved ORD-… refund to the end: approve, then send the email. */
async function approveAndSend(h: RefundHarness, message: string): Promise<ThreadConfig> {
  const config = await startThread(h.graph, message);
  await expectWaitingFor(h.graph, config, "refund_approval");
  await answer(h.graph, config, { decision: "approve" });
  await expectWaitingFor(h.graph, config, "confirm_email");
  await answer(h.graph, config, { choice: "send" });
  return config;
}

async function history(h: RefundHarness, config: ThreadConfig) {
  const snapshots = [];
  for await (const snapshot of h.graph.getStateHistory(config)) snapshots.push(snapshot);
  return snapshots;
}

describe("refund graph on postgres: at most one refund per order", () => {
  let h: RefundHarness;

  beforeAll(async () => {
    h = await openRefundHarness("postgres");
  });
  afterAll(async () => {
    await h?.close();
  });

  it("a fork from the approval checkpoint, approved again, finds the recorded refund", async () => {
    const config = await approveAndSend(h, "The laptop in ORD-1008 is broken, I want a refund.");
    const original = await valuesOf(h.graph, config);
    expect(original.refund?.duplicate).toBe(false);
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1008" })).toBe(1);

    const atApproval = (await history(h, config)).find((s) =>
      s.tasks.some((t) =>
        t.interrupts.some((i) => (i.value as { action?: string }).action === "refund_approval"),
      ),
    );
    expect(atApproval, "the approval checkpoint is in the history").toBeDefined();

    const forkConfig = await h.graph.updateState(atApproval!.config, { reason: "second look" });
    await h.graph.invoke(new Command({ resume: { decision: "approve" } }), forkConfig);
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.body).toContain("already been issued");

    const fork = await valuesOf(h.graph, config);
    expect(fork.reason).toBe("second look");
    expect(fork.refund).toMatchObject({ id: original.refund?.id, amountCents: 129900, duplicate: true });
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1008" })).toBe(1);

    // Sending from the fork finds the thread's queued reply too.
    await answer(h.graph, config, { choice: "send" });
    expect((await valuesOf(h.graph, config)).email).toEqual(original.email);
    expect(await countRows(h.database, "outbox", { threadId: config.configurable.thread_id })).toBe(1);
  });

  it("re-running execute_refund from its checkpoint (crash recovery) records nothing new", async () => {
    const config = await approveAndSend(h, "Refund ORD-1002: the headphones stopped working.");
    const beforeExecute = (await history(h, config)).find((s) => s.next.includes("execute_refund"));
    expect(beforeExecute).toBeDefined();

    // What the recovery sweeper does: continue from the last checkpoint without new input.
    await h.graph.invoke(null, beforeExecute!.config);
    const replayed = await valuesOf(h.graph, config);
    expect(replayed.refund?.duplicate).toBe(true);
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1002" })).toBe(1);
  });

  it("a second thread about a refunded order shows the finding and does not pay again", async () => {
    // ORD-1004 was paid by bank transfer: approve, pick the method, send.
    const first = await startThread(h.graph, "Please refund ORD-1004, wrong colour.");
    await answer(h.graph, first, { decision: "approve" });
    await answer(h.graph, first, { optionId: "original_payment" });
    await answer(h.graph, first, { choice: "send" });
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1004" })).toBe(1);

    const again = await startThread(h.graph, "I still want a refund for ORD-1004!");
    const review = await expectWaitingFor(h.graph, again, "refund_approval");
    expect(review.findings.map((f) => f.code)).toEqual(
      expect.arrayContaining(["already_refunded", "exceeds_order_total"]),
    );
    await answer(h.graph, again, { decision: "approve" });
    await answer(h.graph, again, { optionId: "store_credit" });
    const values = await valuesOf(h.graph, again);
    expect(values.refund).toMatchObject({ duplicate: true, method: "original_payment" });
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1004" })).toBe(1);
  });
});
