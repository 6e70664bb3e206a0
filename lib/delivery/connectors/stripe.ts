import "server-only";
import Stripe from "stripe";
import { STRIPE_TEST_REF } from "@/lib/contract/wire";
import type { GatewayAnswer, PaymentGateway, RefundOrder } from "./payment";

/**
 * Refunds through Stripe with its official SDK. Stripe has no "look a refund up by idempotency key" (a key is
 * replayed for 24 hours, then forgotten), so every refund carries our effect's key in its metadata, and an attempt
 * after one whose outcome is unknown lists the payment's refunds and matches that metadata before sending again.
 *
 * Before the first request, the payment is read: a refund whose currency is not the payment's, or whose amount is
 * above what was paid, is refused here (an operator task) instead of being sent. Amounts are minor units on both
 * sides (Stripe's `amount` is the currency's smallest unit, as our cents are).
 *
 * A refund Stripe answers `pending` (or `requires_action`) is recorded `pending`, never paid: Stripe's webhook
 * (app/api/webhooks/stripe) or the daily reconciliation moves it on when Stripe settles it.
 *
 * Store credit goes to the customer's Stripe balance (a customer balance transaction, negative: a credit), when the
 * order's customer has a Stripe customer id (`orders.stripe_customer`), with the same discipline: our key as the
 * Idempotency-Key and in the metadata, and a look-up among the customer's balance transactions before sending again.
 * Without one it is refused for an operator, and the agent told the customer a person adds it (`handles`).
 *
 * The SDK's own retries are off: the effect dispatcher owns retries, back-off and the attempt count.
 */

/** What a refund is made against: the order's Stripe payment (`orders.payment_ref`). */
export type StripePaymentOf = (orderId: string) => Promise<string | null>;
/** Whom store credit goes to: the order's Stripe customer (`orders.stripe_customer`). */
export type StripeCustomerOf = (orderId: string) => Promise<string | null>;

/** The metadata key that carries our effect's idempotency key on every Stripe refund. */
export const STRIPE_EFFECT_KEY = "hitl_effect_key";

export interface StripeGatewayOptions {
  secretKey: string;
  /** `https://api.stripe.com` unless a test points it elsewhere (scheme and host, optional port). */
  apiBase?: string;
  timeoutMs: number;
  paymentOf: StripePaymentOf;
  customerOf?: StripeCustomerOf;
  /** Refunds per page when listing a payment's refunds (Stripe's maximum is 100). */
  pageSize?: number;
}

export function stripeClient({
  secretKey,
  apiBase,
  timeoutMs,
}: Pick<StripeGatewayOptions, "secretKey" | "apiBase" | "timeoutMs">): Stripe {
  const base = apiBase ? new URL(apiBase) : null;
  return new Stripe(secretKey, {
    maxNetworkRetries: 0,
    timeout: timeoutMs,
    telemetry: false,
    ...(base
      ? {
          host: base.hostname,
          port: base.port ? Number(base.port) : base.protocol === "http:" ? 80 : 443,
          protocol: base.protocol === "http:" ? "http" : "https",
        }
      : {}),
  });
}

export function stripePaymentGateway(options: StripeGatewayOptions): PaymentGateway {
  const stripe = stripeClient(options);
  // A test-mode key moves no real money: its refunds are recorded as such (`stripe-test:` references), so the console
  // never calls one a refund paid.
  const testMode = isTestModeKey(options.secretKey);
  const marked = (answer: GatewayAnswer): GatewayAnswer =>
    answer.kind === "applied" && testMode
      ? { ...answer, providerRef: `${STRIPE_TEST_REF}${answer.providerRef}` }
      : answer;
  const judged = (found: Stripe.Refund, asked: RefundOrder): GatewayAnswer => marked(judge(found, asked));
  const customerOf = options.customerOf ?? (async () => null);

  /** The order's Stripe customer for a store credit, or the refusal that says why there is none. */
  async function customerFor(refund: Pick<RefundOrder, "orderId">): Promise<{ id: string } | GatewayAnswer> {
    const id = await customerOf(refund.orderId);
    if (!id)
      return {
        kind: "refused",
        error: `order ${refund.orderId}'s customer has no Stripe customer on record: add the store credit by hand in the shop`,
      };
    if (!/^cus_[A-Za-z0-9_]+$/.test(id))
      return {
        kind: "refused",
        error: `order ${refund.orderId}'s Stripe customer reference is not a customer id`,
      };
    return { id };
  }

  /** A balance transaction Stripe holds, judged against the credit we asked for (a credit is negative there). */
  const judgedCredit = (found: Stripe.CustomerBalanceTransaction, asked: RefundOrder): GatewayAnswer =>
    found.amount !== -asked.amountCents || found.currency !== asked.currency.toLowerCase()
      ? {
          kind: "refused",
          error: `Stripe's balance transaction ${found.id} is ${-found.amount} ${found.currency.toUpperCase()}, not the ${asked.amountCents} ${asked.currency.toUpperCase()} asked: check it at Stripe`,
        }
      : marked({ kind: "applied", providerRef: found.id });

  async function createCredit(key: string, refund: RefundOrder): Promise<GatewayAnswer> {
    const customer = await customerFor(refund);
    if (!("id" in customer)) return customer;
    try {
      if (!Number.isSafeInteger(refund.amountCents) || refund.amountCents <= 0)
        return {
          kind: "refused",
          error: `the credit amount ${refund.amountCents} is not a positive whole number`,
        };
      const held = await stripe.customers.retrieve(customer.id);
      if ((held as { deleted?: boolean }).deleted)
        return { kind: "refused", error: `Stripe customer ${customer.id} was deleted` };
      const currency = refund.currency.toLowerCase();
      const own = (held as Stripe.Customer).currency;
      if (own && own !== currency)
        return {
          kind: "refused",
          error: `the credit is in ${refund.currency.toUpperCase()} but the customer's Stripe balance is in ${own.toUpperCase()}`,
        };
      const created = await stripe.customers.createBalanceTransaction(
        customer.id,
        {
          amount: -refund.amountCents,
          currency,
          description: `Store credit for ${refund.orderId}`,
          metadata: { [STRIPE_EFFECT_KEY]: key, refund_id: refund.refundId, order_id: refund.orderId },
        },
        { idempotencyKey: key },
      );
      return judgedCredit(created, refund);
    } catch (error) {
      return classifyStripeError(error);
    }
  }

  async function findCredit(key: string, refund: RefundOrder): Promise<GatewayAnswer> {
    const customer = await customerFor(refund);
    if (!("id" in customer)) return customer;
    try {
      for await (const found of stripe.customers.listBalanceTransactions(customer.id, { limit: pageSize })) {
        if (found.metadata?.[STRIPE_EFFECT_KEY] === key) return judgedCredit(found, refund);
      }
      return { kind: "not_found" };
    } catch (error) {
      return classifyStripeError(error);
    }
  }
  const pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100));

  /** The order's Stripe payment, or the refusal that says why there is none to refund against. */
  async function paymentFor(
    refund: Pick<RefundOrder, "orderId" | "method">,
  ): Promise<{ ref: string } | GatewayAnswer> {
    if (refund.method !== "original_payment")
      return {
        kind: "refused",
        error: `a ${refund.method.replace(/_/g, " ")} refund is not a card refund: Stripe only pays back the original payment, so issue it in the shop`,
      };
    const ref = await options.paymentOf(refund.orderId);
    if (!ref)
      return { kind: "refused", error: `order ${refund.orderId} has no Stripe payment on record to refund` };
    if (!/^(pi|ch)_[A-Za-z0-9_]+$/.test(ref))
      return {
        kind: "refused",
        error: `order ${refund.orderId}'s payment reference is not a Stripe PaymentIntent or Charge`,
      };
    return { ref };
  }

  const against = (ref: string) => (ref.startsWith("pi_") ? { payment_intent: ref } : { charge: ref });

  return {
    async handles(refund) {
      if (refund.method === "store_credit") return "id" in (await customerFor(refund));
      return "ref" in (await paymentFor(refund));
    },

    async createRefund(key, refund) {
      if (refund.method === "store_credit") return createCredit(key, refund);
      const payment = await paymentFor(refund);
      if (!("ref" in payment)) return payment;
      try {
        const paid = await paidOf(stripe, payment.ref);
        const currency = refund.currency.toLowerCase();
        if (paid.currency !== currency)
          return {
            kind: "refused",
            error: `the refund is in ${refund.currency.toUpperCase()} but the payment was made in ${paid.currency.toUpperCase()}`,
          };
        if (!Number.isSafeInteger(refund.amountCents) || refund.amountCents <= 0)
          return {
            kind: "refused",
            error: `the refund amount ${refund.amountCents} is not a positive whole number`,
          };
        if (refund.amountCents > paid.refundable)
          return {
            kind: "refused",
            error: `the refund (${refund.amountCents}) is more than is left to refund on the payment (${paid.refundable})`,
          };
        const created = await stripe.refunds.create(
          {
            ...against(payment.ref),
            amount: refund.amountCents,
            reason: "requested_by_customer",
            metadata: {
              [STRIPE_EFFECT_KEY]: key,
              refund_id: refund.refundId,
              order_id: refund.orderId,
            },
          },
          { idempotencyKey: key },
        );
        return judged(created, refund);
      } catch (error) {
        return classifyStripeError(error);
      }
    },

    async findRefund(key, refund) {
      if (refund.method === "store_credit") return findCredit(key, refund);
      const payment = await paymentFor(refund);
      if (!("ref" in payment)) return payment;
      try {
        for await (const found of stripe.refunds.list({ ...against(payment.ref), limit: pageSize })) {
          if (found.metadata?.[STRIPE_EFFECT_KEY] === key) return judged(found, refund);
        }
        return { kind: "not_found" };
      } catch (error) {
        return classifyStripeError(error);
      }
    },
  };
}

/** Stripe's test-mode keys (secret or restricted): everything they do happens in Stripe's test data. */
export function isTestModeKey(key: string): boolean {
  return /^(sk|rk)_test_/.test(key);
}

/** What a payment leaves to refund, in its own currency. */
async function paidOf(stripe: Stripe, ref: string): Promise<{ currency: string; refundable: number }> {
  if (ref.startsWith("pi_")) {
    const intent = await stripe.paymentIntents.retrieve(ref, { expand: ["latest_charge"] });
    const charge = typeof intent.latest_charge === "object" ? intent.latest_charge : null;
    const received = intent.amount_received ?? 0;
    return {
      currency: intent.currency,
      refundable: Math.max(0, received - (charge?.amount_refunded ?? 0)),
    };
  }
  const charge = await stripe.charges.retrieve(ref);
  return {
    currency: charge.currency,
    refundable: Math.max(0, charge.amount_captured - charge.amount_refunded),
  };
}

/** A refund Stripe holds, judged against the one we asked for. */
function judge(found: Stripe.Refund, asked: RefundOrder): GatewayAnswer {
  if (found.amount !== asked.amountCents || found.currency !== asked.currency.toLowerCase())
    return {
      kind: "refused",
      error: `Stripe's refund ${found.id} is ${found.amount} ${found.currency.toUpperCase()}, not the ${asked.amountCents} ${asked.currency.toUpperCase()} asked: check it at Stripe`,
    };
  if (found.status === "failed" || found.status === "canceled")
    return {
      kind: "refused",
      error: `Stripe's refund ${found.id} ${found.status}${found.failure_reason ? ` (${found.failure_reason.replace(/_/g, " ")})` : ""}`,
    };
  // Taken, not settled: Stripe says later (its webhook, or the reconciliation's look-up) whether it succeeded.
  if (found.status === "pending" || found.status === "requires_action")
    return { kind: "applied", providerRef: found.id, pending: true };
  return { kind: "applied", providerRef: found.id };
}

/**
 * A Stripe error, judged by what it says (its `type`, HTTP status and `code` — never by its class, which a bundle may
 * hold twice): a network failure or a 5xx may have applied (looked up before the next attempt); 429 is transient;
 * anything else — a bad request, a card or permission problem, a key Stripe does not know, an idempotency key reused
 * with another body — is final and goes to an operator.
 */
export function classifyStripeError(error: unknown): GatewayAnswer {
  const e = (error ?? {}) as {
    type?: unknown;
    statusCode?: unknown;
    code?: unknown;
    message?: unknown;
  };
  const type = typeof e.type === "string" ? e.type : "";
  const status = typeof e.statusCode === "number" ? e.statusCode : null;
  const code = typeof e.code === "string" && e.code ? ` [${e.code}]` : "";
  const message = (
    typeof e.message === "string" ? e.message : typeof error === "string" ? error : "an unexpected error"
  ).slice(0, 200);
  const what = `Stripe${status ? ` HTTP ${status}` : ""}${code}: ${message}`;
  if (type === "StripeConnectionError") return { kind: "unknown", error: what };
  if (type === "StripeRateLimitError" || status === 429) return { kind: "transient", error: what };
  if (type === "StripeAuthenticationError" || status === 401)
    return { kind: "refused", error: `${what} (STRIPE_SECRET_KEY is not accepted)` };
  if (type === "StripeAPIError" || (status !== null && status >= 500))
    return { kind: "unknown", error: what };
  if (status !== null || type.startsWith("Stripe")) return { kind: "refused", error: what };
  // Not Stripe's: a bug or an unexpected failure here. Not known to have applied, not known not to have.
  return { kind: "unknown", error: what };
}
