import { randomUUID } from "node:crypto";
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
import { listEmailsForThread } from "@/lib/db/queries/outbox";
import { refundGraphInput } from "./graph";

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

/** A new customer message on a finished thread: the ticket is reopened. */
async function reopen(h: RefundHarness, config: ThreadConfig, customerMessage: string) {
  await h.graph.invoke(refundGraphInput({ messageId: randomUUID(), customerMessage }), config);
}

async function effectRows(h: RefundHarness, threadId: string) {
  return h.database.sql.query<{ kind: string; idempotency_key: string; record_id: string }>(
    "SELECT kind, idempotency_key, record_id FROM effects WHERE thread_id = $1 ORDER BY created_at",
    [threadId],
  );
}

describe("refund graph on postgres: one effect per authorizing decision", () => {
  let h: RefundHarness;

  beforeAll(async () => {
    h = await openRefundHarness("postgres");
  });
  afterAll(async () => {
    await h?.close();
  });

  it("re-running execute_refund (crash recovery) finds its own refund and tells the customer it was approved", async () => {
    const config = await approveAndSend(h, "Refund ORD-1002: the headphones stopped working.");
    const original = await valuesOf(h.graph, config);
    const beforeExecute = (await history(h, config)).find((s) => s.next.includes("execute_refund"));
    expect(beforeExecute).toBeDefined();

    // What the recovery sweeper does: continue from the last checkpoint without new input.
    await h.graph.invoke(null, beforeExecute!.config);
    const replayed = await valuesOf(h.graph, config);
    expect(replayed.refund).toEqual(original.refund);
    // The wording bug: a replay is the same refund, never "already issued earlier".
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    expect(email.body).toContain("We have approved your refund of €249.00");
    expect(email.body).not.toMatch(/already/);
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1002" })).toBe(1);
    const threadId = config.configurable.thread_id;
    expect((await effectRows(h, threadId)).filter((e) => e.kind === "payment")).toHaveLength(1);
  });

  it("a fork from the approval checkpoint, approved again, is a new decision: refused above the order total", async () => {
    const config = await approveAndSend(h, "The laptop in ORD-1008 is broken, I want a refund.");
    const original = await valuesOf(h.graph, config);
    expect(original.refund).toMatchObject({ amountCents: 129900, status: "queued" });

    const atApproval = (await history(h, config)).find((s) =>
      s.tasks.some((t) =>
        t.interrupts.some((i) => (i.value as { action?: string }).action === "refund_approval"),
      ),
    );
    expect(atApproval, "the approval checkpoint is in the history").toBeDefined();

    const forkConfig = await h.graph.updateState(atApproval!.config, { reason: "second look" });
    await h.graph.invoke(new Command({ resume: { decision: "approve" } }), forkConfig);
    const email = await expectWaitingFor(h.graph, config, "confirm_email");
    // This time the earlier refund is another decision's: the wording fits.
    expect(email.body).toContain("Earlier refunds of €1,299.00 already paid this order back in full");

    const fork = await valuesOf(h.graph, config);
    expect(fork.reason).toBe("second look");
    expect(fork.refund).toEqual({
      status: "refused",
      orderId: "ORD-1008",
      amountCents: 129900,
      currency: "EUR",
      refundedCents: 129900,
      refundableCents: 0,
    });
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1008" })).toBe(1);

    // Sending from the fork approves another reply: a second email (the fork's), the first one untouched.
    await answer(h.graph, config, { choice: "send" });
    const sent = (await valuesOf(h.graph, config)).email;
    expect(sent?.status).toBe("queued");
    expect(sent?.outboxId).not.toBe(original.email?.outboxId);
    expect(await countRows(h.database, "outbox", { threadId: config.configurable.thread_id })).toBe(2);
  });

  it("a reopened ticket: a second partial refund pays, its edited reply is a new email, a third is refused up front", async () => {
    // ORD-1004 (€89.00, bank transfer): €30 first, within the policy's limit (the policy step is the decision).
    const config = await startThread(h.graph, "Please refund €30 of ORD-1004, a strap is torn.");
    await expectWaitingFor(h.graph, config, "select_option");
    await answer(h.graph, config, { optionId: "original_payment" });
    await answer(h.graph, config, { choice: "send" });
    const first = await valuesOf(h.graph, config);
    expect(first.refund).toMatchObject({ amountCents: 3000, approvedBy: "policy" });

    // Reopened: €40 more, approved; the operator edits the reply before sending it.
    await reopen(h, config, "The zip broke too, please refund another €40 for ORD-1004.");
    const review = await expectWaitingFor(h.graph, config, "refund_approval");
    expect(review.findings.map((f) => f.code)).toContain("already_refunded");
    expect(review.refundable).toEqual({ amountCents: 5900, currency: "EUR" });
    await answer(h.graph, config, { decision: "approve" });
    await expectWaitingFor(h.graph, config, "select_option");
    await answer(h.graph, config, { optionId: "original_payment" });
    await expectWaitingFor(h.graph, config, "confirm_email");
    await answer(h.graph, config, { choice: "send_edited", subject: "Your second refund", body: "Edited." });
    const second = await valuesOf(h.graph, config);
    expect(second.refund).toMatchObject({ amountCents: 4000, status: "queued" });
    const idOf = (r: typeof first.refund) => (r && r.status === "queued" ? r.id : null);
    expect(idOf(second.refund)).not.toBe(idOf(first.refund));
    expect(second.email).toMatchObject({ status: "queued" });
    expect(second.email?.outboxId).not.toBe(first.email?.outboxId);
    expect(await countRows(h.database, "refunds", { orderId: "ORD-1004" })).toBe(2);
    const threadId = config.configurable.thread_id;
    const rows = await effectRows(h, threadId);
    expect(rows.map((r) => r.kind)).toEqual(["payment", "email", "payment", "email"]);
    expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(4);
    const emails = await listEmailsForThread({ db: h.database.db, threadId });
    expect(emails.map((e) => e.subject)).toEqual(["Your refund (ORD-1004)", "Your second refund"]);

    // Reopened again for €50: only €19 is left, so approving it in full is refused before it reaches the graph.
    await reopen(h, config, "And refund €50 more for ORD-1004 please.");
    const third = await expectWaitingFor(h.graph, config, "refund_approval");
    expect(third.refundable).toEqual({ amountCents: 1900, currency: "EUR" });
    const { validateAnswer } = await import("@/lib/contract/questions");
    expect(validateAnswer(third, { decision: "approve" }).ok).toBe(false);
    expect(validateAnswer(third, { decision: "approve_partial", amountCents: 1900 }).ok).toBe(true);
  });
});
