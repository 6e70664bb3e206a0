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
import { threads } from "@/lib/db/schema";
import { ORDER_REF_PATTERN } from "./classify-rules";
import { refundGraphInput } from "./graph";

// PGlite: the embedded default the app runs on without DATABASE_URL.
describe("refund graph on pglite: intake, payment method and other questions", () => {
  let h: RefundHarness;

  beforeAll(async () => {
    h = await openRefundHarness("pglite");
  });
  afterAll(async () => {
    await h?.close();
  });

  it("asks for the order when the message has none, then who the sender is, then continues with the answer", async () => {
    const config = await startThread(h.graph, "Hello, my T-shirts arrived damaged and I want a refund.");
    const question = await expectWaitingFor(h.graph, config, "input_text");
    expect(question.pattern).toBe(ORDER_REF_PATTERN);
    expect(question.context).toBe("Hello, my T-shirts arrived damaged and I want a refund.");

    await answer(h.graph, config, { text: "ORD-1003" });
    // An order number typed by an operator is not the sender's word: a person checks who the sender is first.
    const identity = await expectWaitingFor(h.graph, config, "select_option");
    expect(identity.title).toBe("Is the sender Sofia Rossi?");
    expect(identity.defaultOptionId).toBeUndefined();
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1003" })).toBe(0);
    await answer(h.graph, config, { optionId: "sender_is_customer" });
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.to).toBe("sofia.rossi@example.com");
    const values = await valuesOf(h.graph, config);
    expect(values.orderRef).toBe("ORD-1003");
    expect(values.refund).toMatchObject({ orderId: "ORD-1003", amountCents: 3990, approvedBy: "policy" });
  });

  it("refunds nothing and writes to nobody when the sender of a typed order number is not its customer", async () => {
    const config = await startThread(h.graph, "I want my money back for the jacket.");
    await expectWaitingFor(h.graph, config, "input_text");
    await answer(h.graph, config, { text: "ORD-1011" });
    await expectWaitingFor(h.graph, config, "select_option");
    await answer(h.graph, config, { optionId: "sender_unknown" });
    // The ticket stays with a person: reply yourself, nothing sent, nothing refunded, the order's customer not named.
    const reply = await expectWaitingFor(h.graph, config, "select_option");
    expect(reply.title).toBe("Reply to the customer");
    const values = await valuesOf(h.graph, config);
    expect(values.order).toBeNull();
    expect(values.refund).toBeNull();
    expect(values.reply?.body).not.toContain("ORD-1011");
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1011" })).toBe(0);
    await answer(h.graph, config, { optionId: "replied" });
    expect(await openInterrupts(h.graph, config)).toHaveLength(0);
    expect(await countRows(h.database, "outbox", { threadId: config.configurable.thread_id })).toBe(0);
  });

  it("asks again after a wrong order number, and again after an answer in the wrong format", async () => {
    const config = await startThread(h.graph, "Refund for ORD-9999 please, it never arrived.");
    const first = await expectWaitingFor(h.graph, config, "input_text");
    expect(first.question).toContain("ORD-9999");
    const firstId = (await openInterrupts(h.graph, config))[0]?.id;

    await answer(h.graph, config, { text: "ORD-9998" });
    const second = await expectWaitingFor(h.graph, config, "input_text");
    expect(second.question).toContain("ORD-9998");
    const secondId = (await openInterrupts(h.graph, config))[0]?.id;
    expect(secondId).not.toBe(firstId);

    await answer(h.graph, config, { text: "order one thousand" });
    await expectWaitingFor(h.graph, config, "input_text");

    await answer(h.graph, config, { text: "ORD-1002" });
    await expectWaitingFor(h.graph, config, "select_option");
    await answer(h.graph, config, { optionId: "sender_is_customer" });
    await expectWaitingFor(h.graph, config, "refund_approval");
    // Each lookup is its own tool call with its own id.
    const values = await valuesOf(h.graph, config);
    const toolCallIds = values.messages.filter((m) => m.getType() === "tool").map((m) => m.id);
    expect(new Set(toolCallIds).size).toBe(3);
  });

  it("lets an operator choose store credit for a bank transfer order", async () => {
    const config = await startThread(h.graph, "Please refund ORD-1004, the backpack strap broke.");
    await expectWaitingFor(h.graph, config, "refund_approval");
    await answer(h.graph, config, { decision: "approve" });

    const choice = await expectWaitingFor(h.graph, config, "select_option");
    expect(choice.options.map((o) => o.id)).toEqual(["original_payment", "store_credit"]);
    expect(choice.options.every((o) => (o.description ?? "").length > 0)).toBe(true);
    await answer(h.graph, config, { optionId: "store_credit" });

    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.body).toContain("store credit");
    const values = await valuesOf(h.graph, config);
    expect(values.refundMethod).toBe("store_credit");
    expect(values.refund).toMatchObject({ method: "store_credit", amountCents: 8900 });
  });

  it("uses the caller's order reference over the one in the message", async () => {
    // The ticket was filed with ORD-1009: its sender is that order's customer.
    const config = newThread();
    await h.database.db.insert(threads).values({
      id: config.configurable.thread_id,
      title: "Refund",
      customerMessage: "Refund ORD-1002 please",
      orderRef: "ORD-1009",
    });
    await h.graph.invoke(
      refundGraphInput({
        messageId: randomUUID(),
        customerMessage: "Refund ORD-1002 please",
        orderRef: "ord-1009",
      }),
      config,
    );
    const review = await expectWaitingFor(h.graph, config, "refund_approval");
    expect(review.order.id).toBe("ORD-1009");
    expect(review.findings.map((f) => f.code)).toEqual(["not_delivered"]);
  });

  it("answers a question that is not a refund request with a draft a person sends: it never ends unseen", async () => {
    const config = await startThread(h.graph, "Do you ship to Norway?");
    const task = await expectWaitingFor(h.graph, config, "select_option");
    expect(task.title).toBe("Reply to the customer");
    await answer(h.graph, config, { optionId: "replied" });
    expect(await openInterrupts(h.graph, config)).toHaveLength(0);
    const values = await valuesOf(h.graph, config);
    expect(values.intent).toBe("other");
    expect(values.decision).toBeNull();
    expect(values.refund).toBeNull();
    expect(values.reply?.body).toContain("Thank you for your message");
    expect(values.messages.map((m) => m.getType())).toEqual(["human", "ai"]);
    expect(await countRows(h.database, "outbox", { threadId: config.configurable.thread_id })).toBe(0);
  });

  it("looks up the order of a question that names one, and offers the reply as an email", async () => {
    const config = await startThread(h.graph, "Where is my parcel for ORD-1009?");
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.to).toBe("emma.wilson@example.com");
    const values = await valuesOf(h.graph, config);
    expect(values.intent).toBe("other");
    expect(values.policy).toBeNull();
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1009" })).toBe(0);
  });
});
