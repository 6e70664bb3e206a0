import type { EffectView } from "@/lib/contract/wire";
import { waitForEffectsToSettle } from "../chaos/effects";
import { authedFetch } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import type { TestServer } from "../support/server";
import { startTestSmtpServer, type TestSmtpServer } from "../support/smtp";
import { agentFor, answer, createTicket, payloadOf, postRun, runBody, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/*
 * Side effects over HTTP, counted where they land: refunds at a fake payment provider, email at an in-process SMTP
 * server. ORD-5000 and ORD-5001 are €500.00 card orders (always an approval).
 */
describe("effects: partial refunds, a reopened ticket, delivery status in the API", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;
  let provider: FakePaymentProvider;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    prepared = await prepareDatabase("effects", { prefix: "ORD-5", count: 2 });
    provider = await startFakePaymentProvider();
    smtp = await startTestSmtpServer();
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: {
        PAYMENT_URL: provider.url,
        PAYMENT_TIMEOUT_MS: "1000",
        SMTP_URL: smtp.url,
        EFFECT_POLL_MS: "100",
        EFFECT_RETRY_BASE_MS: "50",
        EFFECT_RETRY_MAX_MS: "200",
        EFFECT_MAX_ATTEMPTS: "3",
      },
    });
  });
  afterAll(async () => {
    await cleanUp([server], prepared);
    await provider?.close();
    await smtp?.close();
  });

  const thread = async (threadId: string) =>
    (await (await authedFetch(`${server!.url}/api/threads/${threadId}`)).json()) as {
      values: Record<string, { status?: string; effectId?: string; outboxId?: string } | null>;
      effects: EffectView[];
    };

  /** Start a ticket and run it to its refund approval; returns the thread and the approval interrupt. */
  async function toApproval(message: string) {
    const threadId = await createTicket(server!.url, message);
    const agent = agentFor(server!.url, threadId);
    const run = await runOnce(agent, { message });
    const approval = run.interrupts[0];
    expect(approval?.reason).toBe("refund_approval");
    return { threadId, agent, approval: approval! };
  }

  async function approveAndSend(
    agent: ReturnType<typeof agentFor>,
    approval: { id: string },
    reply?: object,
  ) {
    const confirm = await runOnce(agent, { resume: [answer(approval as never, { decision: "approve" })] });
    expect(confirm.interrupts[0]?.reason).toBe("confirm_email");
    await runOnce(agent, { resume: [answer(confirm.interrupts[0]!, reply ?? { choice: "send" })] });
  }

  it("two approved partial refunds of one order both pay; a third above the rest is refused before approval", async () => {
    const first = await toApproval("Please refund €200 of ORD-5000, the stand is broken.");
    await approveAndSend(first.agent, first.approval);
    const second = await toApproval("The screen flickers too: please refund €250 of ORD-5000.");
    expect(payloadOf(second.approval).refundable).toEqual({ amountCents: 30000, currency: "EUR" });
    await approveAndSend(second.agent, second.approval);

    const third = await toApproval("And refund €100 more of ORD-5000 please.");
    expect(payloadOf(third.approval).refundable).toEqual({ amountCents: 5000, currency: "EUR" });
    const refused = await postRun(
      server!.url,
      third.threadId,
      runBody(third.threadId, [answer(third.approval, { decision: "approve" })]),
    );
    expect(refused.status).toBe(422);
    expect(String(refused.json?.message)).toMatch(/more than the 50.00 EUR left to refund/);
    const tooMuch = await postRun(
      server!.url,
      third.threadId,
      runBody(third.threadId, [answer(third.approval, { decision: "approve_partial", amountCents: 5001 })]),
    );
    expect(tooMuch.status).toBe(422);
    expect(String(tooMuch.json?.message)).toMatch(/only 50.00 EUR of this order is left to refund/);

    await waitForEffectsToSettle(prepared.sql, 30_000);
    // Provider side: exactly the two approved partial refunds, €200 and €250.
    const paid = provider.created.filter((c) => c.orderId === "ORD-5000").map((c) => c.amountCents);
    expect(paid.sort()).toEqual([20000, 25000]);
    const view = await thread(second.threadId);
    const payment = view.effects.find((e) => e.kind === "payment");
    expect(payment).toMatchObject({ status: "delivered", attempts: 1, lastError: null, task: null });
    expect(payment?.id).toBe(view.values.refund?.effectId);
    // The graph state says what the run knew; the effect says what the provider has.
    expect(view.values.refund?.status).toBe("queued");
  });

  it("a reopened ticket's second, edited reply is a new email, delivered once; state and API say so", async () => {
    const { threadId, agent, approval } = await toApproval(
      "Please refund €100 of ORD-5001, it arrived scratched.",
    );
    await approveAndSend(agent, approval);
    const before = await thread(threadId);

    // The customer writes again on the same thread; an operator passes it on, the supervisor decides (four-eyes).
    const reopen = await runOnce(agent, {
      message: "The lid of ORD-5001 is cracked as well, refund another €50 please.",
      as: "operator",
    });
    expect(reopen.interrupts[0]?.reason).toBe("refund_approval");
    await approveAndSend(agent, reopen.interrupts[0]!, {
      choice: "send_edited",
      subject: "Your second refund (ORD-5001)",
      body: "We have refunded another €50.00.",
    });
    await waitForEffectsToSettle(prepared.sql, 30_000);

    const after = await thread(threadId);
    expect(after.values.email?.status).toBe("queued");
    expect(after.values.email?.outboxId).not.toBe(before.values.email?.outboxId);
    const emails = after.effects.filter((e) => e.kind === "email");
    expect(emails.map((e) => [e.status, e.summary])).toEqual([
      ["delivered", "Email “Your refund (ORD-5001)” to customer1@example.com"],
      ["delivered", "Email “Your second refund (ORD-5001)” to customer1@example.com"],
    ]);
    expect(emails[1]?.id).toBe(after.values.email?.effectId);
    // SMTP side: one message per approved reply, the edited one once.
    const received = smtp.received.filter((m) => m.to.includes("customer1@example.com"));
    expect(received.map((m) => m.subject)).toEqual([
      "Your refund (ORD-5001)",
      "Your second refund (ORD-5001)",
    ]);
    expect(provider.created.filter((c) => c.orderId === "ORD-5001").map((c) => c.amountCents)).toEqual([
      10000, 5000,
    ]);
  });

  it("a failing delivery shows attempts and the last error, raises an operator task, and recovers on retry", async () => {
    provider.setFaults({ down: true });
    const { threadId, agent, approval } = await toApproval("Refund €30 of ORD-5001, the handle came off.");
    await runOnce(agent, { resume: [answer(approval, { decision: "approve" })] });
    await waitForEffectsToSettle(prepared.sql, 30_000);
    const failed = (await thread(threadId)).effects.find((e) => e.kind === "payment")!;
    expect(failed).toMatchObject({ status: "failed", attempts: 3, task: { open: true } });
    expect(failed.lastError).toMatch(/HTTP 500/);
    expect(failed.task?.actions).toEqual(["retry", "refunded_manually", "mark_handled"]);

    provider.setFaults({});
    const act = (action: string) =>
      authedFetch(
        `${server!.url}/api/threads/${threadId}/effects/${failed.id}`,
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ action }) },
        "operator",
      );
    expect((await act("retry")).status).toBe(200);
    const again = await act("mark_handled");
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe("conflict:effect_task");
    await waitForEffectsToSettle(prepared.sql, 30_000);
    const delivered = (await thread(threadId)).effects.find((e) => e.id === failed.id);
    expect(delivered).toMatchObject({ status: "delivered", task: { open: false, resolution: "retry" } });
    const audit = await prepared.sql.rows<{ action: string }>(
      "SELECT action FROM audit_log WHERE thread_id = $1 AND action LIKE 'effect%' ORDER BY id",
      [threadId],
    );
    expect(audit.map((a) => a.action)).toEqual(["effect_failed", "effect_task"]);
  });
});
