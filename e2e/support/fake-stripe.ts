import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * A local server that speaks the part of Stripe's REST API the Stripe connector uses (lib/delivery/connectors/stripe.ts), over
 * real HTTP, so the official SDK talks to it unchanged:
 * - `POST /v1/refunds` with a form-encoded body (`payment_intent` or `charge`, `amount`, `reason`, `metadata[k]`)
 *   and the `Idempotency-Key` header: the same key with the same body answers what it answered the first time
 *   (`Idempotent-Replayed: true`), the same key with another body (or on another endpoint) is a 400
 *   `idempotency_error`; an amount above what is left to refund is a 400 `amount_too_large`, an unknown payment a 404
 *   `resource_missing`. New refunds take the status `setRefundStatus` chose ("succeeded" unless told); `updateRefund`
 *   moves one on later (pending → succeeded, failed, canceled) as Stripe does after the card network answers.
 * - `GET /v1/refunds?payment_intent=…|charge=…&created[gte]=…&created[lt]=…&limit=…&starting_after=…`: newest first,
 *   paginated (`has_more`), so the SDK's auto-pagination walks every page; `GET /v1/refunds/<id>`.
 * - `GET /v1/payment_intents/<id>` (with `expand[0]=latest_charge`, as the SDK sends it, or `expand[]=…`) and
 *   `GET /v1/charges/<id>`.
 * - `GET /v1/customers/<id>` (its `balance`: store credit, negative when the customer is owed) and
 *   `POST /v1/customers/<id>/balance_transactions` (`amount`, `currency`, `description`, `metadata[k]`), with the
 *   refunds' `Idempotency-Key` replay and conflict and the same faults; a currency other than the customer's is a 400
 *   `customer_currency_mismatch`. `GET /v1/customers/<id>/balance_transactions?limit=…&starting_after=…`.
 * - `GET /v1/disputes?payment_intent=…|charge=…&created[gte]=…&created[lt]=…` (paginated as refunds) and
 *   `GET /v1/disputes/<id>`: the disputes `addDispute` opened.
 * - `Authorization: Bearer <key>`: another key is a 401.
 * It counts what it did (`created` is what the world received: one entry per refund Stripe would pay, including those
 * made in the dashboard with `addOutsideRefund`; `balanceTransactions` the same for store credit) and injects faults on
 * refund and balance transaction creation: a 500 before applying, a 500 after applying, a timeout after applying (no
 * answer ever comes) and a connection dropped after applying, and 429s.
 *
 * Webhooks go the other way: `event` builds a Stripe event, `signature` signs it as Stripe does (the `Stripe-Signature`
 * header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed by the endpoint's secret>`), and `deliver` POSTs
 * it to a URL, so a receiver is checked with the SDK's own `webhooks.constructEvent`.
 */

export interface StripeFaults {
  /**
   * How long a key is replayed (Stripe: 24 hours). Shorter than the dispatcher's back-off: every retry of ours comes
   * after Stripe forgot the key (as after an outage longer than a day), the case where only listing the payment's
   * refunds keeps a refund single. (The SDK itself resends once, at once, on a closed connection: within the TTL.)
   */
  keyTtlMs?: number;
  /** Chances per refund or balance transaction creation (0…1). */
  error500?: number;
  error500AfterApply?: number;
  timeoutAfterApply?: number;
  dropAfterApply?: number;
  rateLimited?: number;
}

/** Where a refund stands: "pending" until the card network answers, "failed" or "canceled" when no money moved. */
export type StripeRefundStatus = "succeeded" | "pending" | "failed" | "canceled";

export interface StripeRefund {
  id: string;
  object: "refund";
  amount: number;
  currency: string;
  status: string;
  payment_intent: string;
  charge: string;
  reason: string | null;
  /** Why a failed refund failed (Stripe's codes: `declined`, `expired_or_canceled_card`, …, `unknown`), else null. */
  failure_reason: string | null;
  metadata: Record<string, string>;
  created: number;
}

/** An entry on a customer's balance: negative `amount`s are credit the shop owes the customer. */
export interface BalanceTransaction {
  id: string;
  object: "customer_balance_transaction";
  amount: number;
  currency: string;
  customer: string;
  description: string | null;
  metadata: Record<string, string>;
  created: number;
  type: "adjustment";
  /** The customer's balance once this entry is applied. */
  ending_balance: number;
}

export interface StripeDispute {
  id: string;
  object: "dispute";
  amount: number;
  currency: string;
  charge: string;
  payment_intent: string;
  reason: string;
  status: string;
  created: number;
}

/** A Stripe event ready to send: its id and its JSON body, byte for byte what is signed. */
export interface StripeEvent {
  id: string;
  body: string;
}

/** How a webhook is signed: the endpoint's secret (the fake's own unless told) and the moment it claims (now). */
export interface SignatureOptions {
  secret?: string;
  /** Unix seconds. An old one is what a replayed delivery looks like: the SDK refuses it past its tolerance. */
  timestamp?: number;
}

export interface FakeStripe {
  /** The API base for `STRIPE_API_BASE`. */
  url: string;
  secretKey: string;
  /** The webhook endpoint's signing secret (`whsec_…`). */
  webhookSecret: string;
  /** A payment a customer made: its PaymentIntent and Charge ids. */
  addPayment(payment: { amount: number; currency: string }): { paymentIntent: string; charge: string };
  /** Every refund created, oldest first: what the world received. */
  created: StripeRefund[];
  /** Requests answered, by outcome. */
  outcomes: Record<string, number>;
  /** The form bodies of every refund creation, as received (to check what the SDK sent). */
  refundBodies: Record<string, string>[];
  setFaults(faults: StripeFaults): void;
  /** The status refunds are created with from now on (the API's and `addOutsideRefund`'s). */
  setRefundStatus(status: StripeRefundStatus): void;
  /**
   * What Stripe later learns about a refund: its new status and, when it failed, why (`unknown` unless told). The
   * refund changes in `created` and in every later answer; a replayed creation still answers what it first did. Throws
   * on an unknown refund, or when bringing a failed or canceled refund back would refund more than was paid.
   */
  updateRefund(
    id: string,
    update: { status: StripeRefundStatus; failure_reason?: string | null },
  ): StripeRefund;
  /**
   * A refund made in Stripe's dashboard, not through the API: no metadata, no reason. It is in `created` and in the
   * payment's listed refunds like any other. `currency` is the payment's unless told, `status` the one
   * `setRefundStatus` chose, `created` now (unix seconds). Throws on an unknown payment or an amount above what is left.
   */
  addOutsideRefund(refund: {
    paymentIntent: string;
    amount: number;
    currency?: string;
    status?: StripeRefundStatus;
    created?: number;
  }): StripeRefund;
  /** A customer (`cus_…`); its currency is set now if told, else by its first balance transaction. */
  addCustomer(customer?: { currency?: string }): string;
  /** Every balance transaction applied, oldest first: what the world received. */
  balanceTransactions: BalanceTransaction[];
  /**
   * A dispute the customer's bank opened on a payment ("needs_response"): `amount` the whole payment and `reason`
   * "general" unless told, `created` now.
   */
  addDispute(dispute: {
    paymentIntent: string;
    amount?: number;
    reason?: string;
    created?: number;
  }): StripeDispute;
  /** Every dispute opened, oldest first. */
  disputes: StripeDispute[];
  /** A Stripe event (`evt_…`, API version 2024-06-20) carrying `object` as its `data.object`. */
  event(type: string, object: unknown): StripeEvent;
  /** The `Stripe-Signature` header Stripe would send with `body`. */
  signature(body: string, options?: SignatureOptions): string;
  /** POSTs an event to `url` as Stripe does (JSON, signed); what the receiver answered. */
  deliver(
    url: string,
    event: StripeEvent,
    options?: SignatureOptions,
  ): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

interface Payment {
  paymentIntent: string;
  charge: string;
  amount: number;
  currency: string;
}

interface Customer {
  id: string;
  currency: string | null;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("base64url").replace(/[-_]/g, "x")}`;
const now = () => Math.floor(Date.now() / 1000);
/** Refunds that moved no money: they leave the payment's amount to refund as it was. */
const voided = (status: string) => status === "failed" || status === "canceled";

export async function startFakeStripe(
  options: { faults?: StripeFaults; random?: () => number; secretKey?: string; webhookSecret?: string } = {},
): Promise<FakeStripe> {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(12).toString("hex")}`;
  const webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(24).toString("hex")}`;
  let faults: StripeFaults = options.faults ?? {};
  let refundStatus: StripeRefundStatus = "succeeded";
  const random = options.random ?? Math.random;
  const payments = new Map<string, Payment>();
  const customers = new Map<string, Customer>();
  const created: StripeRefund[] = [];
  const balanceTransactions: BalanceTransaction[] = [];
  const disputes: StripeDispute[] = [];
  const outcomes: Record<string, number> = {};
  const refundBodies: Record<string, string>[] = [];
  /** Idempotency: key → the endpoint and body it was first used with and the answer given. */
  const idempotent = new Map<
    string,
    { endpoint: string; body: string; status: number; answer: unknown; at: number }
  >();
  const sockets = new Set<Socket>();
  const count = (outcome: string) => {
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  };
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", "request-id": id("req"), ...headers });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, type: string, message: string, code?: string) =>
    send(res, status, { error: { type, message, ...(code ? { code } : {}) } });

  const paymentOf = (ref: string | undefined): Payment | undefined => {
    if (!ref) return undefined;
    if (ref.startsWith("pi_")) return payments.get(ref);
    return [...payments.values()].find((p) => p.charge === ref);
  };
  const refundedOf = (payment: Payment) =>
    created
      .filter((r) => r.payment_intent === payment.paymentIntent && !voided(r.status))
      .reduce((sum, r) => sum + r.amount, 0);
  const chargeObject = (p: Payment) => ({
    id: p.charge,
    object: "charge",
    amount: p.amount,
    amount_captured: p.amount,
    amount_refunded: refundedOf(p),
    currency: p.currency,
    disputed: disputes.some((d) => d.payment_intent === p.paymentIntent),
    payment_intent: p.paymentIntent,
    refunded: refundedOf(p) >= p.amount,
    status: "succeeded",
  });
  const balanceOf = (customer: string) =>
    balanceTransactions.filter((t) => t.customer === customer).reduce((sum, t) => sum + t.amount, 0);
  const metadataOf = (form: Record<string, string>) => {
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(form)) {
      const m = /^metadata\[(.+)\]$/.exec(k);
      if (m?.[1]) metadata[m[1]] = v;
    }
    return metadata;
  };
  /** A new refund: its failure reason follows its status. */
  const refundOf = (
    payment: Payment,
    fields: Pick<StripeRefund, "amount" | "currency" | "status" | "reason" | "metadata" | "created">,
  ): StripeRefund => ({
    id: id("re"),
    object: "refund",
    ...fields,
    payment_intent: payment.paymentIntent,
    charge: payment.charge,
    failure_reason: fields.status === "failed" ? "unknown" : null,
  });

  const roll = (): "500" | "500after" | "timeout" | "drop" | "429" | null => {
    const r = random();
    let edge = 0;
    for (const [name, chance] of [
      ["500", faults.error500],
      ["500after", faults.error500AfterApply],
      ["timeout", faults.timeoutAfterApply],
      ["drop", faults.dropAfterApply],
      ["429", faults.rateLimited],
    ] as const) {
      edge += chance ?? 0;
      if (r < edge) return name;
    }
    return null;
  };
  type Fault = ReturnType<typeof roll>;

  /**
   * The `Idempotency-Key` check every creation makes first. A key Stripe still remembers answers here: what it answered
   * the first time when the endpoint and body are the same (whatever the order of the parameters), else a 400
   * `idempotency_error` (then null comes back: nothing more to do). Otherwise comes back how to remember the answer
   * about to be given (a copy: a later change to the object does not change a replay).
   */
  const idempotency = (
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: string,
    form: Record<string, string>,
  ): ((answer: unknown) => void) | null => {
    const key = req.headers["idempotency-key"];
    const fingerprint = JSON.stringify(Object.entries(form).sort(([a], [b]) => a.localeCompare(b)));
    if (typeof key !== "string" || !key) return () => {};
    const seen = idempotent.get(key);
    if (seen && Date.now() - seen.at >= (faults.keyTtlMs ?? 86_400_000)) idempotent.delete(key);
    else if (seen) {
      if (seen.endpoint !== endpoint || seen.body !== fingerprint) {
        count("idempotency_error");
        error(
          res,
          400,
          "idempotency_error",
          seen.endpoint !== endpoint
            ? `Idempotency key ${key} was first used on another endpoint.`
            : `Idempotency key ${key} was first used with other parameters.`,
        );
        return null;
      }
      count("replayed");
      send(res, seen.status, seen.answer, { "idempotent-replayed": "true" });
      return null;
    }
    return (answer) =>
      idempotent.set(key, {
        endpoint,
        body: fingerprint,
        status: 200,
        answer: structuredClone(answer),
        at: Date.now(),
      });
  };
  /** The faults that strike before anything is applied: true when one answered. */
  const faultBefore = (res: ServerResponse, fault: Fault): boolean => {
    if (fault === "500") {
      count("500");
      error(res, 500, "api_error", "Injected failure before applying.");
      return true;
    }
    if (fault === "429") {
      count("429");
      error(res, 429, "invalid_request_error", "Too many requests.", "rate_limit");
      return true;
    }
    return false;
  };
  /** Answers an applied creation, unless a fault takes the answer away (a 500, no answer, a dropped connection). */
  const answerApplied = (
    req: IncomingMessage,
    res: ServerResponse,
    fault: Fault,
    outcome: string,
    answer: unknown,
  ) => {
    if (fault === "500after") {
      count("500_after_apply");
      return error(res, 500, "api_error", "Injected failure after applying.");
    }
    if (fault === "timeout") {
      count("timeout_after_apply");
      return; // applied; the answer never comes
    }
    if (fault === "drop") {
      count("drop_after_apply");
      req.socket.destroy();
      return;
    }
    count(outcome);
    send(res, 200, answer);
  };

  const createRefund = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const form = Object.fromEntries(new URLSearchParams(raw));
    refundBodies.push(form);
    const remember = idempotency(req, res, "/v1/refunds", form);
    if (!remember) return;
    const fault = roll();
    if (faultBefore(res, fault)) return;
    const payment = paymentOf(form.payment_intent ?? form.charge);
    if (!payment) {
      count("resource_missing");
      return error(res, 404, "invalid_request_error", "No such payment.", "resource_missing");
    }
    const amount = Number(form.amount ?? payment.amount - refundedOf(payment));
    if (!Number.isInteger(amount) || amount <= 0) {
      count("parameter_invalid");
      return error(res, 400, "invalid_request_error", "Invalid amount.", "parameter_invalid_integer");
    }
    if (amount > payment.amount - refundedOf(payment)) {
      count("amount_too_large");
      return error(
        res,
        400,
        "invalid_request_error",
        "The refund amount is greater than what is left to refund.",
        refundedOf(payment) >= payment.amount ? "charge_already_refunded" : "amount_too_large",
      );
    }
    const refund = refundOf(payment, {
      amount,
      currency: payment.currency,
      status: refundStatus,
      reason: form.reason ?? null,
      metadata: metadataOf(form),
      created: now(),
    });
    created.push(refund);
    remember(refund);
    answerApplied(req, res, fault, "created", refund);
  };

  const createBalanceTransaction = (
    req: IncomingMessage,
    res: ServerResponse,
    customer: string,
    raw: string,
  ) => {
    const form = Object.fromEntries(new URLSearchParams(raw));
    const remember = idempotency(req, res, `/v1/customers/${customer}/balance_transactions`, form);
    if (!remember) return;
    const fault = roll();
    if (faultBefore(res, fault)) return;
    const found = customers.get(customer);
    if (!found) {
      count("resource_missing");
      return error(res, 404, "invalid_request_error", `No such customer: '${customer}'`, "resource_missing");
    }
    const amount = Number(form.amount);
    if (form.amount === undefined || !Number.isSafeInteger(amount)) {
      count("parameter_invalid");
      return error(res, 400, "invalid_request_error", "Invalid amount.", "parameter_invalid_integer");
    }
    const currency = form.currency?.toLowerCase();
    if (!currency) {
      count("parameter_missing");
      return error(
        res,
        400,
        "invalid_request_error",
        "Missing required param: currency.",
        "parameter_missing",
      );
    }
    if (found.currency && found.currency !== currency) {
      count("customer_currency_mismatch");
      return error(
        res,
        400,
        "invalid_request_error",
        `The customer's balance is in ${found.currency}, not ${currency}.`,
        "customer_currency_mismatch",
      );
    }
    found.currency = currency;
    const transaction: BalanceTransaction = {
      id: id("cbtxn"),
      object: "customer_balance_transaction",
      amount,
      currency,
      customer,
      description: form.description ?? null,
      metadata: metadataOf(form),
      created: now(),
      type: "adjustment",
      ending_balance: balanceOf(customer) + amount,
    };
    balanceTransactions.push(transaction);
    remember(transaction);
    answerApplied(req, res, fault, "balance_transaction", transaction);
  };

  /** `created[gte]`, `[gt]`, `[lte]`, `[lt]` (unix seconds) and `created=<exact>`, as Stripe reads them. */
  const createdWithin = (params: URLSearchParams) => {
    const bound = (name: string) => {
      const value = params.get(name);
      return value === null || value === "" ? null : Number(value);
    };
    const [exact, gte, gt, lte, lt] = [
      "created",
      "created[gte]",
      "created[gt]",
      "created[lte]",
      "created[lt]",
    ].map(bound);
    return (at: number) =>
      (exact == null || at === exact) &&
      (gte == null || at >= gte) &&
      (gt == null || at > gt) &&
      (lte == null || at <= lte) &&
      (lt == null || at < lt);
  };
  /** One page of a list, newest first: `limit` (1…100, 10 unless told) items after `starting_after`. */
  const listOf = <T extends { id: string }>(params: URLSearchParams, path: string, oldestFirst: T[]) => {
    const limit = Math.min(100, Math.max(1, Number(params.get("limit") ?? 10)));
    const after = params.get("starting_after");
    const all = oldestFirst.slice().reverse();
    const start = after ? all.findIndex((r) => r.id === after) + 1 : 0;
    const page = all.slice(start, start + limit);
    return { object: "list", url: path, data: page, has_more: start + limit < all.length };
  };
  /** Refunds and disputes are listed by payment (`payment_intent` or `charge`) and by `created`. */
  const byPaymentAndCreated = <T extends { payment_intent: string; charge: string; created: number }>(
    params: URLSearchParams,
    items: T[],
  ) => {
    const pi = params.get("payment_intent");
    const ch = params.get("charge");
    const within = createdWithin(params);
    return items.filter(
      (r) => (pi ? r.payment_intent === pi : ch ? r.charge === ch : true) && within(r.created),
    );
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      count("unauthorized");
      return error(res, 401, "invalid_request_error", "Invalid API key provided.");
    }
    const url = new URL(req.url ?? "/", "http://fake");
    const formEncoded = () => {
      if ((req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) return true;
      count("bad_content_type");
      error(res, 400, "invalid_request_error", "Bodies are form-encoded.");
      return false;
    };
    if (req.method === "POST" && url.pathname === "/v1/refunds") {
      if (!formEncoded()) return;
      return createRefund(req, res, raw);
    }
    if (req.method === "GET" && url.pathname === "/v1/refunds") {
      count("list");
      return send(
        res,
        200,
        listOf(url.searchParams, "/v1/refunds", byPaymentAndCreated(url.searchParams, created)),
      );
    }
    const refund = /^\/v1\/refunds\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && refund?.[1]) {
      const found = created.find((r) => r.id === refund[1]);
      if (!found)
        return error(res, 404, "invalid_request_error", `No such refund: '${refund[1]}'`, "resource_missing");
      count("refund");
      return send(res, 200, found);
    }
    const intent = /^\/v1\/payment_intents\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && intent?.[1]) {
      const p = payments.get(intent[1]);
      if (!p) return error(res, 404, "invalid_request_error", "No such payment_intent.", "resource_missing");
      count("payment_intent");
      // The SDK sends arrays indexed (`expand[0]=latest_charge`); `expand[]=` is the other form Stripe reads.
      const expanded = [...url.searchParams].some(
        ([k, v]) => /^expand\[\d*\]$/.test(k) && v === "latest_charge",
      );
      return send(res, 200, {
        id: p.paymentIntent,
        object: "payment_intent",
        amount: p.amount,
        amount_received: p.amount,
        currency: p.currency,
        status: "succeeded",
        latest_charge: expanded ? chargeObject(p) : p.charge,
      });
    }
    const charge = /^\/v1\/charges\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && charge?.[1]) {
      const p = paymentOf(charge[1]);
      if (!p) return error(res, 404, "invalid_request_error", "No such charge.", "resource_missing");
      count("charge");
      return send(res, 200, chargeObject(p));
    }
    const customer = /^\/v1\/customers\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && customer?.[1]) {
      const found = customers.get(customer[1]);
      if (!found)
        return error(
          res,
          404,
          "invalid_request_error",
          `No such customer: '${customer[1]}'`,
          "resource_missing",
        );
      count("customer");
      return send(res, 200, {
        id: found.id,
        object: "customer",
        balance: balanceOf(found.id),
        currency: found.currency,
      });
    }
    const balance = /^\/v1\/customers\/([^/]+)\/balance_transactions$/.exec(url.pathname);
    if (req.method === "POST" && balance?.[1]) {
      if (!formEncoded()) return;
      return createBalanceTransaction(req, res, balance[1], raw);
    }
    if (req.method === "GET" && balance?.[1]) {
      const of = balance[1];
      if (!customers.has(of))
        return error(res, 404, "invalid_request_error", `No such customer: '${of}'`, "resource_missing");
      count("balance_transactions");
      return send(
        res,
        200,
        listOf(
          url.searchParams,
          url.pathname,
          balanceTransactions.filter((t) => t.customer === of),
        ),
      );
    }
    if (req.method === "GET" && url.pathname === "/v1/disputes") {
      count("disputes");
      return send(
        res,
        200,
        listOf(url.searchParams, "/v1/disputes", byPaymentAndCreated(url.searchParams, disputes)),
      );
    }
    const dispute = /^\/v1\/disputes\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && dispute?.[1]) {
      const found = disputes.find((d) => d.id === dispute[1]);
      if (!found)
        return error(
          res,
          404,
          "invalid_request_error",
          `No such dispute: '${dispute[1]}'`,
          "resource_missing",
        );
      count("dispute");
      return send(res, 200, found);
    }
    error(res, 404, "invalid_request_error", `Unrecognized request URL (${req.method} ${url.pathname}).`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) error(res, 500, "api_error", "fake Stripe error");
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("fake Stripe: no port");

  const signature = (body: string, { secret = webhookSecret, timestamp = now() }: SignatureOptions = {}) =>
    `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex")}`;

  return {
    url: `http://127.0.0.1:${address.port}`,
    secretKey,
    webhookSecret,
    addPayment({ amount, currency }) {
      const payment = { paymentIntent: id("pi"), charge: id("ch"), amount, currency: currency.toLowerCase() };
      payments.set(payment.paymentIntent, payment);
      return { paymentIntent: payment.paymentIntent, charge: payment.charge };
    },
    created,
    outcomes,
    refundBodies,
    setFaults(next) {
      faults = next;
    },
    setRefundStatus(status) {
      refundStatus = status;
    },
    updateRefund(refundId, { status, failure_reason }) {
      const refund = created.find((r) => r.id === refundId);
      if (!refund) throw new Error(`fake Stripe: no refund ${refundId}`);
      const payment = paymentOf(refund.payment_intent);
      if (
        payment &&
        voided(refund.status) &&
        !voided(status) &&
        refund.amount > payment.amount - refundedOf(payment)
      )
        throw new Error(`fake Stripe: reviving refund ${refundId} would refund more than was paid`);
      refund.status = status;
      refund.failure_reason =
        failure_reason !== undefined
          ? failure_reason
          : status === "failed"
            ? (refund.failure_reason ?? "unknown")
            : null;
      return refund;
    },
    addOutsideRefund({ paymentIntent, amount, currency, status = refundStatus, created: at = now() }) {
      const payment = paymentOf(paymentIntent);
      if (!payment) throw new Error(`fake Stripe: no payment ${paymentIntent}`);
      if (!voided(status) && amount > payment.amount - refundedOf(payment))
        throw new Error(
          `fake Stripe: a refund of ${amount} is more than is left to refund on ${paymentIntent}`,
        );
      const refund = refundOf(payment, {
        amount,
        currency: (currency ?? payment.currency).toLowerCase(),
        status,
        reason: null,
        metadata: {},
        created: at,
      });
      created.push(refund);
      return refund;
    },
    addCustomer({ currency } = {}) {
      const customer = { id: id("cus"), currency: currency?.toLowerCase() ?? null };
      customers.set(customer.id, customer);
      return customer.id;
    },
    balanceTransactions,
    addDispute({ paymentIntent, amount, reason = "general", created: at = now() }) {
      const payment = paymentOf(paymentIntent);
      if (!payment) throw new Error(`fake Stripe: no payment ${paymentIntent}`);
      const dispute: StripeDispute = {
        id: id("dp"),
        object: "dispute",
        amount: amount ?? payment.amount,
        currency: payment.currency,
        charge: payment.charge,
        payment_intent: payment.paymentIntent,
        reason,
        status: "needs_response",
        created: at,
      };
      disputes.push(dispute);
      return dispute;
    },
    disputes,
    event(type, object) {
      const event = {
        id: id("evt"),
        object: "event",
        api_version: "2024-06-20",
        created: now(),
        type,
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
      };
      return { id: event.id, body: JSON.stringify(event) };
    },
    signature,
    async deliver(target, event, signing) {
      const response = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": signature(event.body, signing) },
        body: event.body,
      });
      return { status: response.status, body: await response.text() };
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
