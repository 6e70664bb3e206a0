import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFor, answer, createTicket, runOnce } from "../api/client";
import { cleanUp, prepareDatabase, startTestServer } from "../api/setup";
import { authedFetch } from "../support/auth";
import { type FakePaymentProvider, startFakePaymentProvider } from "../support/fake-payment";
import { startFakeStripe } from "../support/fake-stripe";
import type { TestServer } from "../support/server";

/*
 * Simulators are said, never implied. A deployment (DATABASE_URL) without PAYMENT_URL used to pay through the
 * in-process simulator and show "Delivered" (and SMTP-less email went to .eml files the same way). Now it does not
 * start unless the simulation is meant, and every simulated delivery says so in the API (`simulated`).
 */
describe("simulated payment and email", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let provider: FakePaymentProvider;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    prepared = await prepareDatabase("simulators");
    provider = await startFakePaymentProvider();
  });
  afterAll(async () => {
    await cleanUp(servers, prepared);
    await provider?.close();
  });

  it("refuses to start with DATABASE_URL and no payment provider unless PAYMENT_SIMULATED says so", async () => {
    await expect(
      startTestServer({ databaseUrl: prepared.url, env: { PAYMENT_SIMULATED: "0" } }),
    ).rejects.toThrow(/neither PAYMENT_URL nor STRIPE_SECRET_KEY is set/);
  });

  it("refuses to start with DATABASE_URL and no SMTP_URL unless EMAIL_SIMULATED says so", async () => {
    await expect(
      startTestServer({ databaseUrl: prepared.url, env: { EMAIL_SIMULATED: "0" } }),
    ).rejects.toThrow(/SMTP_URL is not set/);
  });

  async function refundedThread(base: string, order: string) {
    const message = `My item from ${order} arrived broken, please refund it.`;
    const threadId = await createTicket(base, message);
    const agent = agentFor(base, threadId);
    const first = await runOnce(agent, { message });
    const second = await runOnce(agent, { resume: [answer(first.interrupts[0]!, { decision: "approve" })] });
    await runOnce(agent, { resume: [answer(second.interrupts[0]!, { choice: "send" })] });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { effects } = (await (await authedFetch(`${base}/api/threads/${threadId}/effects`)).json()) as {
        effects: { kind: string; status: string; simulated: boolean; providerRef: string | null }[];
      };
      if (effects.length === 2 && effects.every((e) => e.status === "delivered")) return effects;
      if (Date.now() > deadline) throw new Error(`effects not delivered: ${JSON.stringify(effects)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it("labels every simulated delivery, and only those", async () => {
    const simulated = await startTestServer({ databaseUrl: prepared.url, env: { EFFECT_POLL_MS: "100" } });
    servers.push(simulated);
    const all = await refundedThread(simulated.url, "ORD-1002");
    expect(all.map((e) => [e.kind, e.simulated]).sort()).toEqual([
      ["email", true],
      ["payment", true],
    ]);
    await simulated.stop();

    const paying = await startTestServer({
      databaseUrl: prepared.url,
      env: { PAYMENT_URL: provider.url, PAYMENT_SIMULATED: "0", EFFECT_POLL_MS: "100" },
    });
    servers.push(paying);
    const real = await refundedThread(paying.url, "ORD-1008");
    expect(real.map((e) => [e.kind, e.simulated]).sort()).toEqual([
      ["email", true],
      ["payment", false],
    ]);
    expect(provider.created.map((r) => r.orderId)).toEqual(["ORD-1008"]);
    await paying.stop();

    // Stripe, configured by STRIPE_SECRET_KEY (and the API base of a local server speaking Stripe's wire format): the
    // refund is made against the order's PaymentIntent, our effect's key in its metadata. With a live key it is a
    // refund paid; with a test-mode key it is recorded and labelled as moving no real money.
    for (const { key, order, amount, simulated } of [
      {
        key: `sk_live_${randomUUID().replaceAll("-", "")}`,
        order: "ORD-1010",
        amount: 5900,
        simulated: false,
      },
      {
        key: `sk_test_${randomUUID().replaceAll("-", "")}`,
        order: "ORD-1010",
        amount: 5900,
        simulated: true,
      },
    ]) {
      const stripe = await startFakeStripe({ secretKey: key });
      try {
        const { paymentIntent } = stripe.addPayment({ amount, currency: "eur" });
        await prepared.sql.rows("UPDATE orders SET payment_ref = $1 WHERE id = $2", [paymentIntent, order]);
        // The same order each time: what an earlier run refunded is forgotten, so the whole order is left to refund.
        await prepared.sql.rows("DELETE FROM refunds WHERE order_id = $1", [order]);
        const viaStripe = await startTestServer({
          databaseUrl: prepared.url,
          env: {
            STRIPE_SECRET_KEY: stripe.secretKey,
            STRIPE_API_BASE: stripe.url,
            PAYMENT_SIMULATED: "0",
            EFFECT_POLL_MS: "100",
          },
        });
        servers.push(viaStripe);
        const paid = await refundedThread(viaStripe.url, order);
        const payment = paid.find((e) => e.kind === "payment");
        expect(payment).toMatchObject({ simulated, status: "delivered" });
        expect(payment?.providerRef?.startsWith("stripe-test:"), String(payment?.providerRef)).toBe(
          simulated,
        );
        expect(stripe.created.map((r) => [r.payment_intent, r.amount, r.currency])).toEqual([
          [paymentIntent, amount, "eur"],
        ]);
        expect(Object.keys(stripe.created[0]?.metadata ?? {})).toContain("hitl_effect_key");
        await viaStripe.stop();
      } finally {
        await stripe.close();
      }
    }
  });

  it("refuses to start with both PAYMENT_URL and STRIPE_SECRET_KEY: refunds go through one provider", async () => {
    await expect(
      startTestServer({
        databaseUrl: prepared.url,
        env: { PAYMENT_URL: provider.url, STRIPE_SECRET_KEY: "sk_test_both", PAYMENT_SIMULATED: "0" },
      }),
    ).rejects.toThrow(/both PAYMENT_URL and STRIPE_SECRET_KEY are set/);
  });
});
