import { type Backend, openBackend } from "@/e2e/support/backends";
import { type FakePaymentProvider, startFakePaymentProvider } from "@/e2e/support/fake-payment";
import { type FakeStripe, startFakeStripe } from "@/e2e/support/fake-stripe";
import { recordApprovedRefund } from "@/e2e/support/receipts";
import type { Database } from "@/lib/db/open";
import { seedDemoOrders } from "@/lib/shop/demo-orders";
import { orderPaymentRef, orderStripeCustomer } from "@/lib/shop/orders";
import type { EffectConnector } from "./connector";
import { httpPaymentGateway, paymentConnector } from "./connectors/payment";
import { STRIPE_EFFECT_KEY, stripeClient, stripePaymentGateway } from "./connectors/stripe";
import { applyStripeEvent, verifyStripeEvent } from "./connectors/stripe-webhook";
import { dispatchDueEffects, type RetryPolicy } from "./dispatcher";
import { httpReconcileSource, stripeReconcileSource } from "./reconcile";
import { runReconciliationIfDue } from "./reconcile-schedule";

const FAST: RetryPolicy = { maxAttempts: 20, baseMs: 10, maxMs: 80 };

/*
 * Provider truth (issue 56): what Stripe says happened after it answered moves the ledger, only forward — through its
 * signed webhook events and through the daily reconciliation — and store credit goes to the customer's Stripe balance.
 * Against the local Stripe-compatible server, through the official SDK; what counts is what "Stripe" holds.
 */
describe.each<Backend>(["postgres", "pglite"])("provider truth on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;
  let stripe: FakeStripe;

  beforeAll(async () => {
    backend = await openBackend(kind);
    database = backend.database;
    await seedDemoOrders({ db: database.db });
    stripe = await startFakeStripe();
  });
  afterAll(async () => {
    await stripe?.close();
    await backend?.close();
  });

  const gateway = () =>
    stripePaymentGateway({
      secretKey: stripe.secretKey,
      apiBase: stripe.url,
      timeoutMs: 500,
      paymentOf: (orderId) => orderPaymentRef({ db: database.db, orderId }),
      customerOf: (orderId) => orderStripeCustomer({ db: database.db, orderId }),
    });
  const connectors = () => new Map<string, EffectConnector>([["payment", paymentConnector(gateway())]]);

  async function paid(orderId: string, amount: number) {
    const payment = stripe.addPayment({ amount, currency: "eur" });
    await database.sql.query("UPDATE orders SET payment_ref = $1 WHERE id = $2", [
      payment.paymentIntent,
      orderId,
    ]);
    return payment;
  }

  let n = 0;
  async function refund(
    orderId: string,
    amountCents: number,
    method: "original_payment" | "store_credit" = "original_payment",
  ) {
    n++;
    const recorded = await recordApprovedRefund({
      db: database.db,
      decisionRef: `truth-${kind}-${n}`,
      orderId,
      threadId: `truth-${kind}-${n}`,
      amountCents,
      currency: "EUR",
      method,
    });
    if (!recorded.ok) throw new Error("not recorded");
    return recorded.effect;
  }

  async function drain() {
    const deadline = Date.now() + 30_000;
    for (;;) {
      await dispatchDueEffects({ db: database.db, connectors: connectors(), owner: "truth", retry: FAST });
      const [open] = await database.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM effects WHERE status IN ('queued', 'sending')",
      );
      if (open?.n === 0 || Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const effect = async (id: string) => {
    const [row] = await database.sql.query<{
      status: string;
      provider_ref: string | null;
      last_error: string | null;
    }>("SELECT status, provider_ref, last_error FROM effects WHERE id = $1", [id]);
    if (!row) throw new Error(`no effect ${id}`);
    return row;
  };
  const bareRef = (ref: string | null) => (ref ?? "").replace(/^stripe-test:/, "");

  /** An event as Stripe signs and posts it, verified and applied as the route does. */
  async function send(type: string, object: unknown) {
    const event = stripe.event(type, object);
    return deliver(event);
  }
  async function deliver(event: { id: string; body: string }) {
    const verified = verifyStripeEvent({
      raw: event.body,
      signature: stripe.signature(event.body),
      secret: stripe.webhookSecret,
    });
    return applyStripeEvent({ db: database.db, event: verified });
  }
  const refundObject = (id: string) => {
    const found = stripe.created.find((r) => r.id === id);
    if (!found) throw new Error(`no refund ${id} at Stripe`);
    return { ...found };
  };

  it("pending → succeeded: a refund Stripe answers pending is recorded pending, never delivered, until Stripe says it succeeded; a late pending changes nothing", async () => {
    await paid("ORD-1002", 24_900);
    stripe.setRefundStatus("pending");
    const e = await refund("ORD-1002", 2_000);
    await drain();
    stripe.setRefundStatus("succeeded");
    const taken = await effect(e.id);
    expect(taken.status).toBe("pending");
    const id = bareRef(taken.provider_ref);
    expect(stripe.created.filter((r) => r.metadata[STRIPE_EFFECT_KEY] === e.idempotencyKey)).toHaveLength(1);

    const succeeded = stripe.event("refund.updated", { ...stripe.updateRefund(id, { status: "succeeded" }) });
    expect(await deliver(succeeded)).toMatchObject({ outcome: "moved" });
    expect((await effect(e.id)).status).toBe("delivered");
    // The same event again (Stripe retries), and an older `pending` arriving late: nothing moves.
    expect(await deliver(succeeded)).toMatchObject({ outcome: "duplicate" });
    expect(await send("refund.updated", { ...refundObject(id), status: "pending" })).toMatchObject({
      outcome: "unchanged",
    });
    expect((await effect(e.id)).status).toBe("delivered");
    const [events] = await database.sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM provider_events WHERE object_id = $1",
      [id],
    );
    expect(events?.n).toBe(2);
  });

  it("pending → failed: the effect fails with Stripe's reason, an operator task audited as such; a late success does not revive it", async () => {
    await paid("ORD-1006", 4_500);
    stripe.setRefundStatus("pending");
    const e = await refund("ORD-1006", 1_500);
    await drain();
    stripe.setRefundStatus("succeeded");
    const id = bareRef((await effect(e.id)).provider_ref);
    const failed = stripe.updateRefund(id, { status: "failed", failure_reason: "expired_or_canceled_card" });
    expect(await send("refund.failed", failed)).toMatchObject({ outcome: "moved" });
    const row = await effect(e.id);
    expect(row.status).toBe("failed");
    const [audit] = await database.sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM audit_log WHERE action = 'effect_failed' AND thread_id = $1",
      [e.threadId],
    );
    expect(audit?.n).toBe(1);
    // Out of order: a `succeeded` sent before the failure arrives after it.
    expect(await send("refund.updated", { ...failed, status: "succeeded" })).toMatchObject({
      outcome: "unchanged",
    });
    expect((await effect(e.id)).status).toBe("failed");
  });

  it("a delivered refund that fails afterwards fails too (charge.refunded lists its refunds)", async () => {
    const payment = await paid("ORD-1010", 5_900);
    const e = await refund("ORD-1010", 900);
    await drain();
    expect((await effect(e.id)).status).toBe("delivered");
    const id = bareRef((await effect(e.id)).provider_ref);
    const failed = stripe.updateRefund(id, { status: "failed", failure_reason: "lost_or_stolen_card" });
    expect(
      await send("charge.refunded", { id: payment.charge, object: "charge", refunds: { data: [failed] } }),
    ).toMatchObject({ outcome: "moved" });
    expect((await effect(e.id)).status).toBe("failed");
  });

  it("a dispute on an order's payment is one operator task, however often it is sent", async () => {
    const payment = await paid("ORD-1001", 2_498);
    const dispute = stripe.addDispute({ paymentIntent: payment.paymentIntent, reason: "fraudulent" });
    expect(await send("charge.dispute.created", dispute)).toMatchObject({ outcome: "finding" });
    expect(await send("charge.dispute.created", dispute)).toMatchObject({ outcome: "unchanged" });
    const rows = await database.sql.query<{
      kind: string;
      order_id: string;
      provider_side: { reason: string };
    }>("SELECT kind, order_id, provider_side FROM provider_findings WHERE provider_ref = $1", [dispute.id]);
    expect(rows).toEqual([expect.objectContaining({ kind: "dispute", order_id: "ORD-1001" })]);
    expect(rows[0]?.provider_side.reason).toBe("fraudulent");
  });

  it("an unknown event type is acknowledged and moves nothing; an event that does not verify is refused", async () => {
    expect(await send("customer.created", { id: "cus_123", object: "customer" })).toMatchObject({
      outcome: "ignored",
    });
    const event = stripe.event("refund.updated", { id: "re_x", object: "refund", status: "failed" });
    for (const signature of [
      null,
      stripe.signature(event.body, { secret: "whsec_other_secret" }),
      "t=1,v1=00",
    ]) {
      expect(() => verifyStripeEvent({ raw: event.body, signature, secret: stripe.webhookSecret })).toThrow(
        expect.objectContaining({ code: "bad_request:signature" }),
      );
    }
    const stale = stripe.signature(event.body, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    expect(() =>
      verifyStripeEvent({ raw: event.body, signature: stale, secret: stripe.webhookSecret }),
    ).toThrow(expect.objectContaining({ code: "bad_request:signature" }));
  });

  it("store credit goes to the customer's Stripe balance once, through an answer lost after applying; without a Stripe customer it is refused for a person", async () => {
    const customer = stripe.addCustomer({ currency: "eur" });
    await database.sql.query("UPDATE orders SET stripe_customer = $1 WHERE id = 'ORD-1003'", [customer]);
    await database.sql.query("UPDATE orders SET stripe_customer = NULL WHERE id = 'ORD-1004'");
    expect(await gateway().handles?.({ orderId: "ORD-1003", method: "store_credit" })).toBe(true);
    expect(await gateway().handles?.({ orderId: "ORD-1004", method: "store_credit" })).toBe(false);
    // Applied, and no answer comes: Stripe forgot the key before the next attempt, which finds the credit by listing.
    stripe.setFaults({ timeoutAfterApply: 1, keyTtlMs: 1 });
    const credit = await refund("ORD-1003", 500, "store_credit");
    const before = stripe.balanceTransactions.length;
    await dispatchDueEffects({ db: database.db, connectors: connectors(), owner: "truth", retry: FAST });
    stripe.setFaults({});
    await new Promise((r) => setTimeout(r, 100));
    await drain();
    const row = await effect(credit.id);
    expect(row.status, String(row.last_error)).toBe("delivered");
    const mine = stripe.balanceTransactions
      .slice(before)
      .filter((t) => t.metadata[STRIPE_EFFECT_KEY] === credit.idempotencyKey);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ amount: -500, currency: "eur", customer });
    expect(bareRef(row.provider_ref)).toBe(mine[0]?.id);

    const byHand = await refund("ORD-1004", 300, "store_credit");
    await drain();
    const held = await effect(byHand.id);
    expect(held.status).toBe("failed");
    expect(held.last_error).toMatch(/no Stripe customer on record/);
    expect(
      stripe.balanceTransactions.filter((t) => t.metadata[STRIPE_EFFECT_KEY] === byHand.idempotencyKey),
    ).toHaveLength(0);
  });

  it("reconciliation finds exactly the four planted differences, once, across two instances", async () => {
    await database.sql.query("DELETE FROM provider_findings WHERE kind <> 'dispute'");
    const sdk = stripeClient({ secretKey: stripe.secretKey, apiBase: stripe.url, timeoutMs: 2000 });
    const payment = await paid("ORD-1008", 129_900);
    // Agreeing refunds: paid through the dispatcher, as the ledger recorded them.
    const fine = [await refund("ORD-1008", 1_000), await refund("ORD-1008", 1_100)];
    await drain();
    for (const f of fine) expect((await effect(f.id)).status).toBe("delivered");
    // 1. Missing in the ledger: Stripe holds a refund under a key of ours that no effect records.
    const ghost = await sdk.refunds.create({
      payment_intent: payment.paymentIntent,
      amount: 700,
      metadata: { [STRIPE_EFFECT_KEY]: `refund:ghost-${kind}` },
    });
    // 2. Missing at Stripe: the ledger says paid under an id Stripe does not know.
    const lost = await refund("ORD-1008", 1_200);
    await database.sql.query(
      "UPDATE effects SET status = 'delivered', provider_ref = 'stripe-test:re_NotAtStripe', delivered_at = now() WHERE id = $1",
      [lost.id],
    );
    // 3. Amount differs: Stripe refunded another amount under our key.
    const other = await refund("ORD-1008", 1_300);
    const differs = await sdk.refunds.create({
      payment_intent: payment.paymentIntent,
      amount: 1_399,
      metadata: { [STRIPE_EFFECT_KEY]: other.idempotencyKey },
    });
    await database.sql.query(
      "UPDATE effects SET status = 'delivered', provider_ref = $2, delivered_at = now() WHERE id = $1",
      [other.id, `stripe-test:${differs.id}`],
    );
    // 4. Made outside the console: a refund in Stripe's dashboard.
    const outside = stripe.addOutsideRefund({ paymentIntent: payment.paymentIntent, amount: 450 });

    const source = stripeReconcileSource(sdk);
    await database.sql.query("DELETE FROM scheduled_jobs WHERE name = 'reconciliation'");
    await database.sql.query("DELETE FROM reconciliation_runs");
    // Two instances ask at once: one runs.
    const first = await Promise.all(
      ["instance-a", "instance-b"].map((holder) =>
        runReconciliationIfDue(3_600_000, { holder, source, db: database.db }),
      ),
    );
    expect([...first].sort()).toEqual(["not_due", "ran"]);
    const loser = first[0] === "ran" ? "instance-b" : "instance-a";
    // The other runs later (due again): it finds nothing new.
    await database.sql.query(
      "UPDATE scheduled_jobs SET last_started_at = now() - interval '2 hours' WHERE name = 'reconciliation'",
    );
    expect(await runReconciliationIfDue(3_600_000, { holder: loser, source, db: database.db })).toBe("ran");

    const findings = await database.sql.query<{
      kind: string;
      provider_ref: string | null;
      effect_id: string | null;
    }>("SELECT kind, provider_ref, effect_id FROM provider_findings WHERE kind <> 'dispute' ORDER BY kind");
    expect(findings).toEqual([
      { kind: "amount_differs", provider_ref: differs.id, effect_id: other.id },
      { kind: "missing_at_provider", provider_ref: null, effect_id: lost.id },
      { kind: "missing_in_ledger", provider_ref: ghost.id, effect_id: null },
      { kind: "outside_console", provider_ref: outside.id, effect_id: null },
    ]);
    const runs = await database.sql.query<{ instance: string; outcome: string; found: number }>(
      "SELECT instance, outcome, found FROM reconciliation_runs ORDER BY started_at",
    );
    expect(runs.map((r) => [r.outcome, r.found])).toEqual([
      ["ok", 4],
      ["ok", 0],
    ]);
    expect(new Set(runs.map((r) => r.instance))).toEqual(new Set(["instance-a", "instance-b"]));
  });
});

/*
 * The generic provider (PAYMENT_URL) where its contract allows: it cannot list, but it answers a look-up by key with the
 * refund's status and amount, so a pending refund is settled by the reconciliation and a refund the provider does not
 * know, or that failed after it succeeded, is found.
 */
describe.each<Backend>(["postgres", "pglite"])("the generic provider's truth on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let database: Database;
  let provider: FakePaymentProvider;

  beforeAll(async () => {
    backend = await openBackend(kind);
    database = backend.database;
    await seedDemoOrders({ db: database.db });
    provider = await startFakePaymentProvider();
  });
  afterAll(async () => {
    await provider?.close();
    await backend?.close();
  });

  const connectors = () =>
    new Map<string, EffectConnector>([
      ["payment", paymentConnector(httpPaymentGateway({ baseUrl: provider.url, timeoutMs: 1000 }))],
    ]);
  let n = 0;
  async function refund(orderId: string, amountCents: number) {
    n++;
    const recorded = await recordApprovedRefund({
      db: database.db,
      decisionRef: `generic-${kind}-${n}`,
      orderId,
      threadId: `generic-${kind}-${n}`,
      amountCents,
      currency: "EUR",
      method: "original_payment",
    });
    if (!recorded.ok) throw new Error("not recorded");
    return recorded.effect;
  }
  const status = async (id: string) =>
    (await database.sql.query<{ status: string }>("SELECT status FROM effects WHERE id = $1", [id]))[0]
      ?.status;

  it("settles pending refunds by look-up, and finds a refund the provider does not know or that failed after success", async () => {
    provider.setRefundStatus("pending");
    const pending = [await refund("ORD-1002", 1_000), await refund("ORD-1002", 1_100)];
    await dispatchDueEffects({ db: database.db, connectors: connectors(), owner: "generic", retry: FAST });
    provider.setRefundStatus("succeeded");
    const paid = [
      await refund("ORD-1008", 2_000),
      await refund("ORD-1008", 2_100),
      await refund("ORD-1008", 2_200),
    ];
    await dispatchDueEffects({ db: database.db, connectors: connectors(), owner: "generic", retry: FAST });
    for (const e of pending) expect(await status(e.id)).toBe("pending");
    for (const e of paid) expect(await status(e.id)).toBe("delivered");

    provider.setStatus(pending[0]!.idempotencyKey, "succeeded");
    provider.setStatus(pending[1]!.idempotencyKey, "failed");
    provider.setStatus(paid[0]!.idempotencyKey, "failed");
    provider.forget(paid[1]!.idempotencyKey);

    const source = httpReconcileSource({ baseUrl: provider.url, timeoutMs: 1000 });
    expect(await runReconciliationIfDue(0, { holder: "generic-a", source, db: database.db })).toBe("ran");
    expect(await status(pending[0]!.id)).toBe("delivered");
    expect(await status(pending[1]!.id)).toBe("failed");
    expect(await status(paid[0]!.id)).toBe("failed");
    expect(await status(paid[2]!.id)).toBe("delivered");
    const findings = await database.sql.query<{ kind: string; effect_id: string }>(
      "SELECT kind, effect_id FROM provider_findings WHERE provider = 'http' ORDER BY kind",
    );
    expect(findings).toEqual([
      { kind: "failed_after_success", effect_id: paid[0]!.id },
      { kind: "missing_at_provider", effect_id: paid[1]!.id },
    ]);
    // Again: nothing new.
    expect(await runReconciliationIfDue(0, { holder: "generic-b", source, db: database.db })).toBe("ran");
    const [again] = await database.sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM provider_findings WHERE provider = 'http'",
    );
    expect(again?.n).toBe(2);
  });
});
