import { randomUUID } from "node:crypto";
import {
  answer,
  countRows,
  expectWaitingFor,
  newThread,
  openInterrupts,
  openRefundHarness,
  type RefundHarness,
  startThread,
  valuesOf,
} from "@/e2e/support/refund-harness";
import { listEmailsForThread } from "@/lib/db/queries/outbox";
import { refundGraphInput } from "./graph";

describe("refund graph on postgres: approvals", () => {
  let h: RefundHarness;

  beforeAll(async () => {
    h = await openRefundHarness("postgres");
  });
  afterAll(async () => {
    await h?.close();
  });

  it("auto-approves a small refund, still asks to confirm the email, and queues it", async () => {
    const config = await startThread(
      h.graph,
      "Hi, the mug from ORD-1001 arrived damaged. Please refund €12.49.",
    );
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.to).toBe("anna.schmidt@example.com");
    expect(email.body).toContain("€12.49");

    const paused = await valuesOf(h.graph, config);
    expect(paused.intent).toBe("refund");
    expect(paused.reason).toBe("item arrived damaged");
    expect(paused.policy).toEqual({ autoApprove: true, findings: [], refundedCents: 0 });
    expect(paused.decision).toMatchObject({ decision: "approve", amountCents: 1249, decidedBy: "policy" });
    expect(paused.refund).toMatchObject({ orderId: "ORD-1001", amountCents: 1249, approvedBy: "policy" });
    // Recorded with its payment intent; nothing is paid until the dispatcher delivers it.
    expect(paused.refund).toMatchObject({ status: "queued", effectId: expect.any(String) });
    expect(paused.decision?.ref).toMatch(/\/check_policy:/);
    // The lookup is a tool call: an AI message with the call, then the tool's result.
    const [, call, result, reply] = paused.messages;
    expect(call?.getType()).toBe("ai");
    expect(result?.getType()).toBe("tool");
    expect(reply?.text).toBe(paused.reply?.body);

    await answer(h.graph, config, { choice: "send" });
    const done = await valuesOf(h.graph, config);
    expect(done.email).toMatchObject({ status: "queued", effectId: expect.any(String) });
    expect(await openInterrupts(h.graph, config)).toHaveLength(0);
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1001" })).toBe(1);
    expect(await countRows(h.database, "outbox", { threadId: config.configurable.thread_id })).toBe(1);
  });

  it("sends a large refund to an operator: approve → confirm → send, one refund and one email", async () => {
    const config = await startThread(h.graph, "My headphones (ORD-1002) stopped working. I want a refund.");
    const review = await expectWaitingFor(h.graph, config, "refund_approval");
    expect(review.requested).toEqual({ amountCents: 24900, currency: "EUR" });
    expect(review.refundable).toEqual({ amountCents: 24900, currency: "EUR" });
    expect(review.customer).toEqual({ name: "Lars Jensen", email: "lars.jensen@example.com" });
    expect(review.findings.map((f) => [f.code, f.severity])).toEqual([["over_auto_limit", "block"]]);
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1002" })).toBe(0);

    await answer(h.graph, config, { decision: "approve" });
    await expectWaitingFor(h.graph, config, "confirm_email");
    await answer(h.graph, config, { choice: "send" });

    const done = await valuesOf(h.graph, config);
    expect(done.decision).toMatchObject({ decision: "approve", amountCents: 24900, decidedBy: "operator" });
    expect(done.refund).toMatchObject({
      amountCents: 24900,
      method: "original_payment",
      approvedBy: "supervisor@test.local",
    });
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1002" })).toBe(1);
    expect(await countRows(h.database, "outbox", { threadId: config.configurable.thread_id })).toBe(1);
  });

  it("rejects with a note: no refund, and the reply says it was rejected", async () => {
    const config = await startThread(h.graph, "Refund ORD-1006 please, I changed my mind.");
    const review = await expectWaitingFor(h.graph, config, "refund_approval");
    expect(review.findings.map((f) => f.code)).toEqual(["late_request"]);

    await answer(h.graph, config, {
      decision: "reject",
      note: "Customer has a history of late claims (internal).",
      customerMessage: "The 30-day return window has passed.",
    });
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.body).toContain("rejected");
    expect(email.body).toContain("The 30-day return window has passed.");
    // The internal note is never sent to the customer.
    expect(email.body).not.toContain("history of late claims");
    const values = await valuesOf(h.graph, config);
    expect(values.refund).toBeNull();
    expect(values.decision).toMatchObject({ decision: "reject", amountCents: 0 });
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1006" })).toBe(0);
  });

  it("approves part of the requested amount: the refund is the partial amount", async () => {
    const config = await startThread(h.graph, "The laptop from ORD-1008 has a dead pixel, refund €1,299.00!");
    const review = await expectWaitingFor(h.graph, config, "refund_approval");
    expect(review.requested.amountCents).toBe(129900);

    await answer(h.graph, config, {
      decision: "approve_partial",
      amountCents: 20000,
      note: "Dead pixel discount",
    });
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.body).toContain("partial refund of €200.00");
    const values = await valuesOf(h.graph, config);
    expect(values.refund).toMatchObject({ amountCents: 20000, status: "queued" });
  });

  it("asks again when the answer does not fit the payload (a partial above the requested amount)", async () => {
    const config = await startThread(h.graph, "Refund for ORD-1010 please, the shoes hurt.");
    await expectWaitingFor(h.graph, config, "refund_approval");
    await answer(h.graph, config, { decision: "approve_partial", amountCents: 999_999 });
    await expectWaitingFor(h.graph, config, "refund_approval");
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1010" })).toBe(0);
  });

  it("sends the operator's edited email, or nothing", async () => {
    const edited = await startThread(h.graph, "Please refund ORD-1003, wrong size.");
    await expectWaitingFor(h.graph, edited, "confirm_email");
    await answer(h.graph, edited, { choice: "send_edited", subject: "Your refund", body: "Done, Sofia!" });
    const rows = await listEmailsForThread({ db: h.database.db, threadId: edited.configurable.thread_id });
    expect(rows.map(({ subject, body }) => ({ subject, body }))).toEqual([
      { subject: "Your refund", body: "Done, Sofia!" },
    ]);

    const silent = await startThread(h.graph, "I'd like my money back for ORD-1005.");
    await expectWaitingFor(h.graph, silent, "select_option");
    await answer(h.graph, silent, { optionId: "original_payment" });
    await answer(h.graph, silent, { choice: "dont_send" });
    expect((await valuesOf(h.graph, silent)).email).toEqual({ status: "not_sent" });
    expect(await countRows(h.database, "outbox", { threadId: silent.configurable.thread_id })).toBe(0);
  });

  it("streams the offline model's reply in token chunks through the messages stream mode", async () => {
    const config = newThread();
    const input = refundGraphInput({ messageId: randomUUID(), customerMessage: "Do you ship to Norway?" });
    const texts: string[] = [];
    const stream = await h.graph.stream(input, { ...config, streamMode: "messages" });
    for await (const [message, metadata] of stream) {
      if ((metadata as { langgraph_node?: string }).langgraph_node === "write_reply")
        texts.push(message.text);
    }
    expect(texts.length).toBeGreaterThan(5);
    expect(texts.join("")).toBe((await valuesOf(h.graph, config)).reply?.body);
  });
});
