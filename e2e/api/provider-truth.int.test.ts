import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authedFetch, authHeaders } from "../support/auth";
import { type FakeStripe, startFakeStripe } from "../support/fake-stripe";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer, until } from "./setup";

/*
 * Provider truth over HTTP (issue 56), on a real server configured with Stripe (the local Stripe-compatible server,
 * through the official SDK) and its webhook secret: a refund Stripe leaves pending reads "pending at Stripe" and fails
 * when Stripe says so — after the customer was emailed — as an operator task the thread page words; the webhook route
 * refuses what does not verify (writing nothing) and never answers 5xx; store credit goes to the customer's Stripe
 * balance, and the customer's text says what happened in each branch.
 */

interface EffectRow {
  id: string;
  kind: string;
  status: string;
  lastError: string | null;
  providerRef: string | null;
  summary: string;
}

describe("provider truth over HTTP", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let stripe: FakeStripe;
  let server: Awaited<ReturnType<typeof startTestServer>> | undefined;
  let second: Awaited<ReturnType<typeof startTestServer>> | undefined;
  let base = "";
  const webhook = () => `${base}/api/webhooks/stripe`;
  /** Each instance's settings: Stripe (the local server) with its webhook secret, no reconciliation of its own. */
  const stripeEnv = () => ({
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_API_BASE: stripe.url,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    PAYMENT_SIMULATED: "0",
    EFFECT_POLL_MS: "100",
    RECONCILE_SCHEDULE: "off",
  });

  beforeAll(async () => {
    prepared = await prepareDatabase("provider-truth");
    stripe = await startFakeStripe();
    server = await startTestServer({ databaseUrl: prepared.url, env: stripeEnv() });
    base = server.url;
  }, 120_000);
  afterAll(async () => {
    await cleanUp([server, second], prepared);
    await stripe?.close();
  });

  const effects = async (threadId: string) =>
    (
      (await (await authedFetch(`${base}/api/threads/${threadId}/effects`)).json()) as {
        effects: EffectRow[];
      }
    ).effects;
  const counts = async () =>
    (
      await prepared.sql.rows<{ events: number; findings: number; moved: number }>(
        `SELECT (SELECT count(*)::int FROM provider_events) AS events,
                (SELECT count(*)::int FROM provider_findings) AS findings,
                (SELECT count(*)::int FROM audit_log WHERE actor_id = 'system:provider') AS moved`,
      )
    )[0]!;

  it("pending → failed after the customer email: 'pending at Stripe', then an operator task the thread page words; the email claimed no refund paid", async () => {
    const { paymentIntent } = stripe.addPayment({ amount: 24_900, currency: "eur" });
    await prepared.sql.rows("UPDATE orders SET payment_ref = $1 WHERE id = 'ORD-1002'", [paymentIntent]);
    stripe.setRefundStatus("pending");
    const message = "My headphones from ORD-1002 arrived broken, please refund them.";
    const threadId = await createTicket(base, message);
    const agent = agentFor(base, threadId);
    const first = await runOnce(agent, { message });
    const second = await runOnce(agent, { resume: [answer(first.interrupts[0]!, { decision: "approve" })] });
    await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "send" })] });
    const taken = await until("the refund pending and the email sent", async () => {
      const all = await effects(threadId);
      const payment = all.find((e) => e.kind === "payment");
      const email = all.find((e) => e.kind === "email");
      return payment?.status === "pending" && email?.status === "delivered" ? { payment, email } : undefined;
    });
    stripe.setRefundStatus("succeeded");
    // The customer was told what was decided, never that the money arrived.
    const [mail] = await prepared.sql.rows<{ body: string }>(
      "SELECT payload->>'body' AS body FROM effects WHERE id = $1",
      [taken.email.id],
    );
    expect(mail?.body ?? "").not.toMatch(/has been (refunded|added|paid)|arrived in your account/i);

    const refundId = (taken.payment.providerRef ?? "").replace(/^stripe-test:/, "");
    const failed = stripe.updateRefund(refundId, {
      status: "failed",
      failure_reason: "expired_or_canceled_card",
    });
    const res = await stripe.deliver(webhook(), stripe.event("refund.failed", failed));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ received: true, outcome: "moved" });

    const payment = (await effects(threadId)).find((e) => e.kind === "payment")!;
    expect(payment.status).toBe("failed");
    expect(payment.lastError).toMatch(
      /^provider:refund_failed: Stripe's refund re_\S+ failed \(expired or canceled card\)/,
    );
    // Its task: paid another way, or closed; a retry would find the same failed refund under its key.
    const task = (payment as unknown as { task: { open: boolean; actions: string[] } }).task;
    expect(task).toMatchObject({ open: true, actions: ["refunded_manually", "mark_handled"] });
    const retry = await authedFetch(
      `${base}/api/threads/${threadId}/effects/${payment.id}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ action: "retry" }),
      },
      "operator",
    );
    expect(retry.status).toBe(400);
    const page = await fetch(`${base}/threads/${threadId}`, {
      headers: await authHeaders(base, "supervisor"),
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(
      "Failed at the payment provider: the refund did not reach the customer",
    );
  });

  it("a refund Stripe cannot make (no payment on record): the reply tells the customer a person sends it, never that it goes back by itself", async () => {
    await prepared.sql.rows("UPDATE orders SET payment_ref = NULL WHERE id = 'ORD-1008'");
    const message = "The laptop from ORD-1008 arrived broken, please refund it.";
    const threadId = await createTicket(base, message);
    const agent = agentFor(base, threadId);
    const first = await runOnce(agent, { message });
    const second = await runOnce(agent, { resume: [answer(first.interrupts[0]!, { decision: "approve" })] });
    const draft = String(
      (second.interrupts[0]?.metadata?.payload as { body?: string } | undefined)?.body ?? "",
    );
    expect(draft).toMatch(
      /A member of our team will send the amount of €1,299\.00 back to your original payment method by hand/,
    );
    expect(draft).not.toMatch(/should arrive within/);
    await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "send" })] });
    const payment = await until("the refund refused for a person", async () =>
      (await effects(threadId)).find((e) => e.kind === "payment" && e.status === "failed"),
    );
    expect(payment.lastError).toMatch(/has no Stripe payment on record/);
  });

  it("refuses what does not verify and writes nothing; acknowledges replays and unknown types; never 5xx (generated)", async () => {
    const before = await counts();
    const statuses = new Set<number>();
    const object = { id: "re_Hostile", object: "refund", status: "failed", amount: 100, currency: "eur" };
    const signed = stripe.event("refund.updated", object);
    const otherSecret = "whsec_not_this_endpoints_secret";
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.constant(signed.body),
          fc.json({ maxDepth: 4 }),
          fc.constant(`${signed.body} `),
        ),
        fc.constantFrom("none", "garbage", "other-secret", "stale", "signed-other-body"),
        fc.constantFrom("application/json", "text/plain", ""),
        async (body, signature, contentType) => {
          const header =
            signature === "none"
              ? null
              : signature === "garbage"
                ? "t=1,v1=deadbeef"
                : signature === "other-secret"
                  ? stripe.signature(body, { secret: otherSecret })
                  : signature === "stale"
                    ? stripe.signature(body, { timestamp: Math.floor(Date.now() / 1000) - 7200 })
                    : stripe.signature(`${body}x`);
          const res = await fetch(webhook(), {
            method: "POST",
            headers: {
              ...(contentType ? { "content-type": contentType } : {}),
              ...(header ? { "stripe-signature": header } : {}),
            },
            body,
          });
          statuses.add(res.status);
          const answer = (await res.json()) as { code?: string };
          expect(res.status, JSON.stringify(answer)).toBe(400);
          expect(answer.code).toBe("bad_request:signature");
        },
      ),
      { numRuns: 60, seed: 56 },
    );
    // A 10 MB body is refused before it is read whole.
    const huge = "x".repeat(10 * 1024 * 1024);
    const big = await fetch(webhook(), {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": stripe.signature(huge) },
      body: huge,
    }).catch((error: unknown) => ({ status: 413, error }));
    expect(big.status).toBe(413);
    // A body that verifies but is no event (no JSON, no id).
    for (const raw of ["not json", JSON.stringify({ hello: "world" })]) {
      const res = await fetch(webhook(), {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": stripe.signature(raw) },
        body: raw,
      });
      expect(res.status).toBe(400);
    }
    expect(await counts()).toEqual(before);
    expect([...statuses].every((s) => s < 500)).toBe(true);

    // Verified: an unknown type is acknowledged (200) and moves nothing; a replay is acknowledged once more.
    const unknown = stripe.event("customer.subscription.created", { id: "sub_1", object: "subscription" });
    for (let i = 0; i < 2; i++) {
      const res = await stripe.deliver(webhook(), unknown);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).outcome).toBe(i === 0 ? "ignored" : "duplicate");
    }
    const after = await counts();
    expect(after).toEqual({ ...before, events: before.events + 1 });
  });

  it("store credit at Stripe end to end: with a Stripe customer it is on their balance and the customer is told it is being processed; without one a person is named", async () => {
    const customer = stripe.addCustomer({ currency: "eur" });
    await prepared.sql.rows("UPDATE orders SET stripe_customer = $1 WHERE id = 'ORD-1006'", [customer]);
    await prepared.sql.rows("UPDATE orders SET stripe_customer = NULL WHERE id = 'ORD-1010'");
    const credit = async (order: string) => {
      const message = `My parcel ${order} arrived crushed.`;
      const threadId = await createTicket(base, message, order, "order_support");
      const agent = agentFor(base, threadId);
      const asked = await runOnce(agent, { message });
      const done = await runOnce(agent, {
        resume: [answer(asked.interrupts[0]!, { decisions: [{ type: "approve" }] })],
      });
      const said = done.events
        .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
        .map((e) => (e as { delta?: string }).delta ?? "")
        .join("");
      const payment = await until(`${order}'s credit settled`, async () => {
        const p = (await effects(threadId)).find((e) => e.kind === "payment");
        return p && p.status !== "queued" && p.status !== "sending" ? p : undefined;
      });
      return { said, payment };
    };

    const before = stripe.balanceTransactions.length;
    const atStripe = await credit("ORD-1006");
    expect(atStripe.said).toMatch(/has been queued for your account; it is being processed now/);
    expect(atStripe.payment.status).toBe("delivered");
    const made = stripe.balanceTransactions.slice(before);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ customer, amount: -450, currency: "eur" });

    const byHand = await credit("ORD-1010");
    expect(byHand.said).toMatch(/a colleague will add it by hand/);
    expect(byHand.said).not.toMatch(/being processed/);
    expect(byHand.payment.status).toBe("failed");
    expect(byHand.payment.lastError).toMatch(/no Stripe customer on record/);
    expect(stripe.balanceTransactions).toHaveLength(before + 1);
  });

  it("reconciliation over two real instances: four planted differences found exactly once, whoever runs it", async () => {
    second = await startTestServer({ databaseUrl: prepared.url, env: stripeEnv() });
    await prepared.sql.rows("DELETE FROM provider_findings");
    const { paymentIntent } = stripe.addPayment({ amount: 129_900, currency: "eur" });
    await prepared.sql.rows("UPDATE orders SET payment_ref = $1 WHERE id = 'ORD-1003'", [paymentIntent]);
    const sdk = await import("@/lib/delivery/connectors/stripe").then((m) =>
      m.stripeClient({ secretKey: stripe.secretKey, apiBase: stripe.url, timeoutMs: 2000 }),
    );
    // 1. Missing in the ledger: a refund under a key of ours no effect records.
    const ghost = await sdk.refunds.create({
      payment_intent: paymentIntent,
      amount: 300,
      metadata: { hitl_effect_key: "refund:ghost-two-instances" },
    });
    // 2 and 3: two payments effects the ledger says paid: one under an id Stripe does not know, one for another amount.
    const [paid] = await prepared.sql.rows<{ id: string; thread_id: string }>(
      "SELECT id, thread_id FROM effects WHERE kind = 'payment' AND status IN ('delivered', 'failed') AND provider_ref LIKE 'stripe-test:re_%' ORDER BY created_at LIMIT 1",
    );
    if (!paid) throw new Error("no paid refund to plant differences on");
    const [lost] = await prepared.sql.rows<{ id: string }>(
      `INSERT INTO effects (id, idempotency_key, thread_id, kind, record_id, payload, status, provider_ref, delivered_at)
       SELECT gen_random_uuid()::text, 'refund:lost-two-instances', thread_id, kind, record_id, payload, 'delivered',
         'stripe-test:re_NotAtStripeTwo', now() FROM effects WHERE id = $1 RETURNING id`,
      [paid.id],
    );
    const differs = await sdk.refunds.create({
      payment_intent: paymentIntent,
      amount: 777,
      metadata: { hitl_effect_key: "refund:differs-two-instances" },
    });
    const [other] = await prepared.sql.rows<{ id: string }>(
      `INSERT INTO effects (id, idempotency_key, thread_id, kind, record_id, payload, status, provider_ref, delivered_at)
       SELECT gen_random_uuid()::text, 'refund:differs-two-instances', thread_id, kind, record_id, payload, 'delivered',
         $2, now() FROM effects WHERE id = $1 RETURNING id`,
      [paid.id, `stripe-test:${differs.id}`],
    );
    // 4. A refund made in Stripe's dashboard.
    const outside = stripe.addOutsideRefund({ paymentIntent, amount: 250 });

    // An admin on each instance asks at once; then each asks again.
    const run = (at: string) => authedFetch(`${at}/api/reconciliation/run`, { method: "POST" }, "admin");
    const first = await Promise.all([run(server!.url), run(second.url)]);
    for (const res of first) expect([200, 409], await res.clone().text()).toContain(res.status);
    expect(first.some((r) => r.status === 200)).toBe(true);
    for (const at of [server!.url, second.url]) expect((await run(at)).status).toBe(200);

    const findings = await prepared.sql.rows<{
      kind: string;
      provider_ref: string | null;
      effect_id: string | null;
    }>("SELECT kind, provider_ref, effect_id FROM provider_findings ORDER BY kind");
    expect(findings).toEqual([
      { kind: "amount_differs", provider_ref: differs.id, effect_id: other?.id },
      { kind: "missing_at_provider", provider_ref: null, effect_id: lost?.id },
      { kind: "missing_in_ledger", provider_ref: ghost.id, effect_id: null },
      { kind: "outside_console", provider_ref: outside.id, effect_id: null },
    ]);
    const runs = await prepared.sql.rows<{ instance: string; found: number; outcome: string }>(
      "SELECT instance, found, outcome FROM reconciliation_runs ORDER BY started_at",
    );
    expect(runs.every((r) => r.outcome === "ok")).toBe(true);
    expect(runs.reduce((n, r) => n + r.found, 0)).toBe(4);
    const report = (await (
      await authedFetch(`${second.url}/api/reconciliation`, {}, "supervisor")
    ).json()) as {
      openFindings: number;
    };
    expect(report.openFindings).toBe(4);
  });
});
