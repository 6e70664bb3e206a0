import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { type FakeStripe, startFakeStripe } from "@/e2e/support/fake-stripe";
import { recordApprovedRefund } from "@/e2e/support/receipts";
import { seeded } from "@/e2e/support/seeded";
import { STRIPE_TEST_REF } from "@/lib/contract/wire";
import type { Database } from "@/lib/db/open";
import { registerInstance } from "@/lib/db/queries/instances";
import { instanceLabels } from "@/lib/platform/instance";
import { seedDemoOrders } from "@/lib/shop/demo-orders";
import { orderPaymentRef } from "@/lib/shop/orders";
import type { EffectConnector } from "../connector";
import { dispatchDueEffects, type RetryPolicy } from "../dispatcher";
import { paymentConnector } from "./payment";
import { classifyStripeError, STRIPE_EFFECT_KEY, stripeClient, stripePaymentGateway } from "./stripe";

const FAST: RetryPolicy = { maxAttempts: 20, baseMs: 10, maxMs: 80 };

/*
 * Stripe as a payment provider (issue 29): the official SDK against a local server that speaks Stripe's wire format
 * (form-encoded bodies, Idempotency-Key replay and conflict, listed refunds with metadata), with the faults the
 * dispatcher suite injects. What counts is what "Stripe" received: refunds created, once per effect.
 */
describe.each<Backend>(["postgres", "pglite"])("Stripe refunds on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;
  let stripe: FakeStripe;

  beforeAll(async () => {
    backend = await openBackend(kind);
    database = backend.database;
    await seedDemoOrders({ db: database.db });
    stripe = await startFakeStripe({ random: seeded(kind === "postgres" ? 29 : 31) });
  });
  afterAll(async () => {
    await stripe?.close();
    await backend?.close();
  });

  const connectorsWith = (options: { secretKey?: string; pageSize?: number } = {}) =>
    new Map<string, EffectConnector>([
      [
        "payment",
        paymentConnector(
          stripePaymentGateway({
            secretKey: options.secretKey ?? stripe.secretKey,
            apiBase: stripe.url,
            timeoutMs: 300,
            pageSize: options.pageSize,
            paymentOf: (orderId) => orderPaymentRef({ db: database.db, orderId }),
          }),
        ),
      ],
    ]);

  /** Give an order a Stripe payment (what the shop would store when the customer paid). */
  async function paid(orderId: string, amount: number, currency = "eur") {
    const payment = stripe.addPayment({ amount, currency });
    await database.sql.query("UPDATE orders SET payment_ref = $1 WHERE id = $2", [
      payment.paymentIntent,
      orderId,
    ]);
    return payment;
  }

  async function refund(
    decisionRef: string,
    orderId: string,
    amountCents: number,
    method = "original_payment",
  ) {
    const recorded = await recordApprovedRefund({
      db: database.db,
      decisionRef,
      orderId,
      threadId: `stripe-${decisionRef}`,
      amountCents,
      currency: "EUR",
      method: method as "original_payment",
    });
    if (!recorded.ok) throw new Error(`not recorded: ${decisionRef}`);
    return recorded.effect;
  }

  const effect = async (id: string) => {
    const [row] = await database.sql.query<{
      status: string;
      attempts: number;
      provider_ref: string | null;
      last_error: string | null;
      idempotency_key: string;
    }>("SELECT status, attempts, provider_ref, last_error, idempotency_key FROM effects WHERE id = $1", [id]);
    if (!row) throw new Error(`no effect ${id}`);
    return row;
  };

  async function drain(connectors: Map<string, EffectConnector>, retry = FAST, owner = "stripe-dispatcher") {
    const deadline = Date.now() + 60_000;
    for (;;) {
      await dispatchDueEffects({ db: database.db, connectors, owner, retry });
      const [open] = await database.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM effects WHERE status IN ('queued', 'sending')",
      );
      if (open?.n === 0 || Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const createdFor = (key: string) => stripe.created.filter((r) => r.metadata[STRIPE_EFFECT_KEY] === key);

  it("pays 30 refunds exactly once each, its key forgotten by Stripe, through 500s before and after applying, timeouts and dropped connections after applying, and 429s; reconciles by listing the payment's refunds", async () => {
    const payment = await paid("ORD-1008", 129_900);
    stripe.setFaults({
      // Stripe forgets a key before our next attempt (the back-off below is at least 1 s): only the lookup by
      // metadata keeps a refund single. The SDK's own immediate resend on a closed connection comes within it.
      keyTtlMs: 700,
      error500: 0.1,
      error500AfterApply: 0.1,
      timeoutAfterApply: 0.1,
      dropAfterApply: 0.1,
      rateLimited: 0.1,
    });
    const effects: Awaited<ReturnType<typeof refund>>[] = [];
    for (let i = 0; i < 30; i++) effects.push(await refund(`fault-${i}`, "ORD-1008", 1000 + i));
    // Pages of 7: a retry's lookup has to page through the payment's refunds to find its own.
    await drain(connectorsWith({ pageSize: 7 }), { maxAttempts: 20, baseMs: 2000, maxMs: 2000 });
    stripe.setFaults({});

    for (const [i, e] of effects.entries()) {
      const row = await effect(e.id);
      expect(row.status, `refund ${i}: ${row.last_error}`).toBe("delivered");
      const atStripe = createdFor(row.idempotency_key);
      expect(atStripe, `refund ${i} at Stripe`).toHaveLength(1);
      // The fake speaks for a test-mode key: the reference says no real money moved.
      expect(row.provider_ref?.startsWith(STRIPE_TEST_REF), `refund ${i}: ${row.provider_ref}`).toBe(true);
      expect(atStripe[0]).toMatchObject({
        id: row.provider_ref?.slice(STRIPE_TEST_REF.length),
        amount: 1000 + i,
        currency: "eur",
        payment_intent: payment.paymentIntent,
      });
    }
    expect(stripe.created.filter((r) => r.payment_intent === payment.paymentIntent)).toHaveLength(30);
    // Every fault happened, and the unknown outcomes were reconciled by listing.
    for (const fault of ["500", "500_after_apply", "timeout_after_apply", "drop_after_apply", "429"])
      expect(stripe.outcomes[fault] ?? 0, fault).toBeGreaterThan(0);
    expect(stripe.outcomes.list ?? 0).toBeGreaterThan(0);
    // The wire format: form-encoded minor units against the payment, our key in the metadata.
    const body = stripe.refundBodies.find(
      (b) => b[`metadata[${STRIPE_EFFECT_KEY}]`] === effects[0]?.idempotencyKey,
    );
    expect(body).toMatchObject({ payment_intent: payment.paymentIntent, amount: "1000" });
  });

  it("takes over a refund a dead dispatcher sent to Stripe and finds it there instead of paying twice", async () => {
    const payment = await paid("ORD-1001", 2498);
    const e = await refund("crashed", "ORD-1001", 900);
    // The dead dispatcher's request reached Stripe; it died before recording the answer.
    const sdk = stripeClient({ secretKey: stripe.secretKey, apiBase: stripe.url, timeoutMs: 1000 });
    const sent = await sdk.refunds.create(
      {
        payment_intent: payment.paymentIntent,
        amount: 900,
        metadata: { [STRIPE_EFFECT_KEY]: e.idempotencyKey },
      },
      { idempotencyKey: e.idempotencyKey },
    );
    const dead = randomUUID();
    await registerInstance({ db: database.db, instance: { ...instanceLabels(), id: dead, pid: 999_997 } });
    await database.sql.query(
      "UPDATE effects SET status = 'sending', attempts = 1, owner = $1, lease_expires_at = now() + interval '1 hour' WHERE id = $2",
      [dead, e.id],
    );
    await drain(connectorsWith());
    expect(await effect(e.id)).toMatchObject({
      status: "delivered",
      attempts: 2,
      provider_ref: `${STRIPE_TEST_REF}${sent.id}`,
    });
    expect(createdFor(e.idempotencyKey)).toHaveLength(1);
  });

  it("Idempotency-Key: the same key and body replay the same refund; the same key with another body is refused, and nothing more is paid", async () => {
    const payment = await paid("ORD-1002", 5000);
    const sdk = stripeClient({ secretKey: stripe.secretKey, apiBase: stripe.url, timeoutMs: 1000 });
    const key = `replay-${randomUUID()}`;
    const params = {
      payment_intent: payment.paymentIntent,
      amount: 700,
      metadata: { [STRIPE_EFFECT_KEY]: key },
    };
    const first = await sdk.refunds.create(params, { idempotencyKey: key });
    const again = await sdk.refunds.create(params, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    const other = await sdk.refunds.create({ ...params, amount: 701 }, { idempotencyKey: key }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(classifyStripeError(other)).toMatchObject({
      kind: "refused",
      error: expect.stringMatching(/HTTP 400/),
    });
    expect(createdFor(key)).toHaveLength(1);
  });

  it("refuses before sending, with the reason and an operator task: another currency, more than is left, no Stripe payment, store credit, a key Stripe does not accept", async () => {
    await paid("ORD-1003", 10_000, "usd");
    const currency = await refund("currency", "ORD-1003", 500);
    await paid("ORD-1004", 300);
    const tooMuch = await refund("too-much", "ORD-1004", 400);
    await database.sql.query("UPDATE orders SET payment_ref = NULL WHERE id = 'ORD-1005'");
    const nothing = await refund("no-payment", "ORD-1005", 100);
    await paid("ORD-1006", 10_000);
    const credit = await refund("credit", "ORD-1006", 100, "store_credit");
    const before = stripe.created.length;
    await drain(connectorsWith());
    const reasons = {
      [currency.id]: /in EUR but the payment was made in USD/,
      [tooMuch.id]: /more than is left to refund on the payment \(300\)/,
      [nothing.id]: /has no Stripe payment on record/,
      [credit.id]: /has no Stripe customer on record/,
    };
    for (const [id, reason] of Object.entries(reasons)) {
      const row = await effect(id);
      expect(row).toMatchObject({ status: "failed", attempts: 1 });
      expect(row.last_error).toMatch(reason);
    }
    expect(stripe.created.length).toBe(before);

    await paid("ORD-1007", 10_000);
    const badKey = await refund("bad-key", "ORD-1007", 100);
    await drain(connectorsWith({ secretKey: "sk_test_not_the_one" }));
    const row = await effect(badKey.id);
    expect(row).toMatchObject({ status: "failed", attempts: 1 });
    expect(row.last_error).toMatch(/HTTP 401.*STRIPE_SECRET_KEY is not accepted/);
    expect(stripe.outcomes.unauthorized ?? 0).toBeGreaterThan(0);
    expect(stripe.created.length).toBe(before);
  });
});

describe("Stripe errors, judged by what they say", () => {
  it("a connection failure or a 5xx may have applied (unknown), a 429 is transient, any other 4xx is final", () => {
    const types = [
      "StripeConnectionError",
      "StripeAPIError",
      "StripeRateLimitError",
      "StripeInvalidRequestError",
      "StripeCardError",
      "StripeAuthenticationError",
      "StripePermissionError",
      "StripeIdempotencyError",
      "SomethingElse",
    ];
    fc.assert(
      fc.property(
        fc.record({
          type: fc.option(fc.constantFrom(...types), { nil: undefined }),
          statusCode: fc.option(fc.integer({ min: 400, max: 599 }), { nil: undefined }),
          code: fc.option(fc.string(), { nil: undefined }),
          message: fc.option(fc.string(), { nil: undefined }),
        }),
        (error) => {
          const judged = classifyStripeError(error);
          const status = error.statusCode;
          if (error.type === "StripeConnectionError") expect(judged.kind).toBe("unknown");
          else if (error.type === "StripeRateLimitError" || status === 429)
            expect(judged.kind).toBe("transient");
          else if (error.type === "StripeAuthenticationError" || status === 401)
            expect(judged.kind).toBe("refused");
          else if (error.type === "StripeAPIError" || (status !== undefined && status >= 500))
            expect(judged.kind).toBe("unknown");
          else if (status !== undefined) expect(judged.kind).toBe("refused");
          // Every answer says what happened in words, and never more than a short line.
          if ("error" in judged) expect(judged.error.length).toBeLessThan(300);
        },
      ),
      { numRuns: 500 },
    );
  });
});
