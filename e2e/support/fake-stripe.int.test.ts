import Stripe from "stripe";
import { stripeClient } from "@/lib/delivery/connectors/stripe";
import { type FakeStripe, startFakeStripe } from "./fake-stripe";

/*
 * The fake Stripe, checked through the official SDK the connectors use (configured as they configure it): what a test
 * sets up in it (refund statuses, dashboard refunds, customers' store credit, disputes, webhooks) reads back through
 * the SDK's own calls, auto-pagination and webhook verification as it would from Stripe.
 */
describe("fake Stripe through the Stripe SDK", () => {
  let fake: FakeStripe;
  let stripe: Stripe;

  beforeAll(async () => {
    fake = await startFakeStripe();
    stripe = stripeClient({ secretKey: fake.secretKey, apiBase: fake.url, timeoutMs: 2_000 });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("creates refunds pending when told, and moves them on", async () => {
    const payment = fake.addPayment({ amount: 5_000, currency: "EUR" });
    fake.setRefundStatus("pending");
    try {
      const refund = await stripe.refunds.create(
        { payment_intent: payment.paymentIntent, amount: 3_000, metadata: { order_id: "ORD-1" } },
        { idempotencyKey: "pending-1" },
      );
      expect(refund.status).toBe("pending");
      expect(refund.failure_reason ?? null).toBeNull();

      const failed = fake.updateRefund(refund.id, {
        status: "failed",
        failure_reason: "expired_or_canceled_card",
      });
      expect(failed).toMatchObject({
        id: refund.id,
        status: "failed",
        failure_reason: "expired_or_canceled_card",
      });
      const read = await stripe.refunds.retrieve(refund.id);
      expect(read.status).toBe("failed");
      expect(read.failure_reason).toBe("expired_or_canceled_card");
      // A failed refund moved no money: the whole payment is refundable again.
      const intent = await stripe.paymentIntents.retrieve(payment.paymentIntent, {
        expand: ["latest_charge"],
      });
      expect((intent.latest_charge as Stripe.Charge).amount_refunded).toBe(0);
      // A replay answers what the creation answered then.
      const replayed = await stripe.refunds.create(
        { payment_intent: payment.paymentIntent, amount: 3_000, metadata: { order_id: "ORD-1" } },
        { idempotencyKey: "pending-1" },
      );
      expect(replayed.status).toBe("pending");

      const second = await stripe.refunds.create({ payment_intent: payment.paymentIntent, amount: 5_000 });
      expect(second.status).toBe("pending");
      expect(fake.updateRefund(second.id, { status: "succeeded" }).failure_reason).toBeNull();
      expect((await stripe.refunds.retrieve(second.id)).status).toBe("succeeded");
      fake.updateRefund(second.id, { status: "canceled" });
      const charge = await stripe.charges.retrieve(payment.charge);
      expect(charge.amount_refunded).toBe(0);
    } finally {
      fake.setRefundStatus("succeeded");
    }
    await expect(stripe.refunds.retrieve("re_unknown")).rejects.toMatchObject({
      statusCode: 404,
      code: "resource_missing",
    });
  });

  it("lists refunds by creation time, page after page", async () => {
    // A Stripe of its own: the other tests' refunds are of the same second.
    const own = await startFakeStripe();
    try {
      const client = stripeClient({ secretKey: own.secretKey, apiBase: own.url, timeoutMs: 2_000 });
      const from = Math.floor(Date.now() / 1000);
      const payment = own.addPayment({ amount: 10_000, currency: "eur" });
      const old = own.addOutsideRefund({
        paymentIntent: payment.paymentIntent,
        amount: 100,
        created: from - 3_600,
      });
      const made: string[] = [];
      for (let i = 0; i < 5; i++)
        made.push(
          (await client.refunds.create({ payment_intent: payment.paymentIntent, amount: 100 + i })).id,
        );

      const lists = own.outcomes.list ?? 0;
      const listed: string[] = [];
      for await (const refund of client.refunds.list({ created: { gte: from }, limit: 2 }))
        listed.push(refund.id);
      expect(listed).toEqual(made.slice().reverse());
      // Three pages of two.
      expect((own.outcomes.list ?? 0) - lists).toBe(3);
      const before = await client.refunds.list({ created: { lt: from } });
      expect(before.data.map((r) => r.id)).toEqual([old.id]);
      expect(before.has_more).toBe(false);
    } finally {
      await own.close();
    }
  });

  it("records dashboard refunds without metadata", async () => {
    const payment = fake.addPayment({ amount: 2_000, currency: "usd" });
    const outside = fake.addOutsideRefund({ paymentIntent: payment.paymentIntent, amount: 700 });
    expect(fake.created.at(-1)).toBe(outside);
    const listed = await stripe.refunds.list({ payment_intent: payment.paymentIntent });
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({
      id: outside.id,
      amount: 700,
      currency: "usd",
      status: "succeeded",
    });
    expect(listed.data[0]?.metadata).toEqual({});
    expect(listed.data[0]?.reason).toBeNull();
    expect(() => fake.addOutsideRefund({ paymentIntent: payment.paymentIntent, amount: 1_301 })).toThrow();
  });

  it("keeps customers' balances, once per idempotency key", async () => {
    const customer = fake.addCustomer();
    const fresh = await stripe.customers.retrieve(customer);
    expect(fresh).toMatchObject({ id: customer, object: "customer", balance: 0, currency: null });

    const params = {
      amount: -1_250,
      currency: "eur",
      description: "Store credit",
      metadata: { refund_id: "r1" },
    };
    const first = await stripe.customers.createBalanceTransaction(customer, params, {
      idempotencyKey: "credit-1",
    });
    expect(first).toMatchObject({
      object: "customer_balance_transaction",
      amount: -1_250,
      currency: "eur",
      customer,
      description: "Store credit",
      metadata: { refund_id: "r1" },
      type: "adjustment",
      ending_balance: -1_250,
    });
    expect(first.id).toMatch(/^cbtxn_/);
    const again = await stripe.customers.createBalanceTransaction(customer, params, {
      idempotencyKey: "credit-1",
    });
    expect(again.id).toBe(first.id);
    expect(fake.balanceTransactions.filter((t) => t.customer === customer)).toHaveLength(1);

    const conflict = await stripe.customers
      .createBalanceTransaction(customer, { ...params, amount: -99 }, { idempotencyKey: "credit-1" })
      .then(
        () => null,
        (error: unknown) => error as { type?: string; statusCode?: number },
      );
    expect(conflict).not.toBeNull();
    expect(conflict?.type === "StripeIdempotencyError" || conflict?.statusCode === 400).toBe(true);

    await expect(
      stripe.customers.createBalanceTransaction(customer, { amount: -1, currency: "usd" }),
    ).rejects.toMatchObject({ statusCode: 400, code: "customer_currency_mismatch" });
    await expect(
      stripe.customers.createBalanceTransaction("cus_unknown", { amount: -1, currency: "eur" }),
    ).rejects.toMatchObject({ statusCode: 404, code: "resource_missing" });

    const second = await stripe.customers.createBalanceTransaction(customer, {
      amount: 250,
      currency: "eur",
    });
    expect(second.ending_balance).toBe(-1_000);
    expect(await stripe.customers.retrieve(customer)).toMatchObject({ balance: -1_000, currency: "eur" });

    const listed: string[] = [];
    for await (const t of stripe.customers.listBalanceTransactions(customer, { limit: 1 })) listed.push(t.id);
    expect(listed).toEqual([second.id, first.id]);
    expect(fake.balanceTransactions.slice(-2).map((t) => t.id)).toEqual([first.id, second.id]);
  });

  it("lists disputes by creation time", async () => {
    const from = Math.floor(Date.now() / 1000);
    const payment = fake.addPayment({ amount: 4_000, currency: "eur" });
    const earlier = fake.addDispute({ paymentIntent: payment.paymentIntent, created: from - 86_400 });
    const dispute = fake.addDispute({
      paymentIntent: payment.paymentIntent,
      amount: 1_500,
      reason: "fraudulent",
    });
    expect(dispute).toMatchObject({
      object: "dispute",
      amount: 1_500,
      currency: "eur",
      charge: payment.charge,
      payment_intent: payment.paymentIntent,
      reason: "fraudulent",
      status: "needs_response",
    });
    const recent = await stripe.disputes.list({ created: { gte: from } });
    expect(recent.data.map((d) => d.id)).toEqual([dispute.id]);
    const all: string[] = [];
    for await (const d of stripe.disputes.list({ limit: 1 })) all.push(d.id);
    expect(all).toEqual([dispute.id, earlier.id]);
    expect(fake.disputes).toEqual([earlier, dispute]);
  });

  it("signs webhooks as Stripe does", async () => {
    const { id, body } = fake.event("refund.updated", { id: "re_x", object: "refund", status: "failed" });
    expect(fake.webhookSecret).toMatch(/^whsec_[0-9a-f]+$/);
    const header = fake.signature(body);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const verifier = new Stripe("sk_test_x");
    const event = verifier.webhooks.constructEvent(body, header, fake.webhookSecret);
    expect(event).toMatchObject({
      id,
      object: "event",
      type: "refund.updated",
      data: { object: { id: "re_x", status: "failed" } },
    });
    expect(() => verifier.webhooks.constructEvent(body, header, "whsec_other")).toThrow();
    expect(() =>
      verifier.webhooks.constructEvent(
        body,
        fake.signature(body, { secret: "whsec_other" }),
        fake.webhookSecret,
      ),
    ).toThrow();
    // An old timestamp is past the SDK's tolerance.
    const stale = fake.signature(body, { timestamp: Math.floor(Date.now() / 1000) - 3_600 });
    expect(() => verifier.webhooks.constructEvent(body, stale, fake.webhookSecret)).toThrow();
  });

  it("delivers webhooks over HTTP", async () => {
    const { createServer } = await import("node:http");
    const verifier = new Stripe("sk_test_x");
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        try {
          const event = verifier.webhooks.constructEvent(
            Buffer.concat(chunks).toString("utf8"),
            String(req.headers["stripe-signature"]),
            fake.webhookSecret,
          );
          res
            .writeHead(200, { "content-type": "text/plain" })
            .end(`${req.headers["content-type"]} ${event.id}`);
        } catch {
          res.writeHead(400).end("bad signature");
        }
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const address = receiver.address();
      if (!address || typeof address !== "object") throw new Error("no port");
      const target = `http://127.0.0.1:${address.port}/webhooks/stripe`;
      const event = fake.event("charge.dispute.created", fake.disputes[0] ?? {});
      expect(await fake.deliver(target, event)).toEqual({
        status: 200,
        body: `application/json ${event.id}`,
      });
      expect(await fake.deliver(target, event, { secret: "whsec_other" })).toEqual({
        status: 400,
        body: "bad signature",
      });
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
