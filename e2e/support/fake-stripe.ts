import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * A local server that speaks the part of Stripe's REST API the Stripe connector uses (lib/delivery/connectors/stripe.ts), over
 * real HTTP, so the official SDK talks to it unchanged:
 * - `POST /v1/refunds` with a form-encoded body (`payment_intent` or `charge`, `amount`, `reason`, `metadata[k]`)
 *   and the `Idempotency-Key` header: the same key with the same body answers what it answered the first time
 *   (`Idempotent-Replayed: true`), the same key with another body is a 400 `idempotency_error`; an amount above
 *   what is left to refund is a 400 `amount_too_large`, an unknown payment a 404 `resource_missing`.
 * - `GET /v1/refunds?payment_intent=…|charge=…&limit=…&starting_after=…`: newest first, paginated (`has_more`).
 * - `GET /v1/payment_intents/<id>` (with `expand[]=latest_charge`) and `GET /v1/charges/<id>`.
 * - `Authorization: Bearer <key>`: another key is a 401.
 * It counts what it did (`created` is what the world received: one entry per refund Stripe would pay) and injects
 * faults on refund creation: a 500 before applying, a 500 after applying, a timeout after applying (no answer ever
 * comes) and a connection dropped after applying, and 429s.
 */

export interface StripeFaults {
  /**
   * How long a key is replayed (Stripe: 24 hours). Shorter than the dispatcher's back-off: every retry of ours comes
   * after Stripe forgot the key (as after an outage longer than a day), the case where only listing the payment's
   * refunds keeps a refund single. (The SDK itself resends once, at once, on a closed connection: within the TTL.)
   */
  keyTtlMs?: number;
  /** Chances per refund creation (0…1). */
  error500?: number;
  error500AfterApply?: number;
  timeoutAfterApply?: number;
  dropAfterApply?: number;
  rateLimited?: number;
}

export interface StripeRefund {
  id: string;
  object: "refund";
  amount: number;
  currency: string;
  status: string;
  payment_intent: string;
  charge: string;
  reason: string | null;
  metadata: Record<string, string>;
  created: number;
}

export interface FakeStripe {
  /** The API base for `STRIPE_API_BASE`. */
  url: string;
  secretKey: string;
  /** A payment a customer made: its PaymentIntent and Charge ids. */
  addPayment(payment: { amount: number; currency: string }): { paymentIntent: string; charge: string };
  /** Every refund created, oldest first: what the world received. */
  created: StripeRefund[];
  /** Requests answered, by outcome. */
  outcomes: Record<string, number>;
  /** The form bodies of every refund creation, as received (to check what the SDK sent). */
  refundBodies: Record<string, string>[];
  setFaults(faults: StripeFaults): void;
  close(): Promise<void>;
}

interface Payment {
  paymentIntent: string;
  charge: string;
  amount: number;
  currency: string;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("base64url").replace(/[-_]/g, "x")}`;

export async function startFakeStripe(
  options: { faults?: StripeFaults; random?: () => number; secretKey?: string } = {},
): Promise<FakeStripe> {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(12).toString("hex")}`;
  let faults: StripeFaults = options.faults ?? {};
  const random = options.random ?? Math.random;
  const payments = new Map<string, Payment>();
  const created: StripeRefund[] = [];
  const outcomes: Record<string, number> = {};
  const refundBodies: Record<string, string>[] = [];
  /** Idempotency: key → the body it was first used with and the answer given. */
  const idempotent = new Map<string, { body: string; status: number; answer: unknown; at: number }>();
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
      .filter((r) => r.payment_intent === payment.paymentIntent && r.status !== "failed")
      .reduce((sum, r) => sum + r.amount, 0);
  const chargeObject = (p: Payment) => ({
    id: p.charge,
    object: "charge",
    amount: p.amount,
    amount_captured: p.amount,
    amount_refunded: refundedOf(p),
    currency: p.currency,
    payment_intent: p.paymentIntent,
    refunded: refundedOf(p) >= p.amount,
    status: "succeeded",
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

  const createRefund = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const form = Object.fromEntries(new URLSearchParams(raw));
    refundBodies.push(form);
    const key = req.headers["idempotency-key"];
    // A body is "the same" whatever the order of its parameters.
    const fingerprint = JSON.stringify(Object.entries(form).sort(([a], [b]) => a.localeCompare(b)));
    if (typeof key === "string" && key) {
      const seen = idempotent.get(key);
      if (seen && Date.now() - seen.at >= (faults.keyTtlMs ?? 86_400_000)) idempotent.delete(key);
      else if (seen) {
        if (seen.body !== fingerprint) {
          count("idempotency_error");
          return error(
            res,
            400,
            "idempotency_error",
            `Idempotency key ${key} was first used with other parameters.`,
          );
        }
        count("replayed");
        return send(res, seen.status, seen.answer, { "idempotent-replayed": "true" });
      }
    }
    const fault = roll();
    if (fault === "500") {
      count("500");
      return error(res, 500, "api_error", "Injected failure before applying.");
    }
    if (fault === "429") {
      count("429");
      return error(res, 429, "invalid_request_error", "Too many requests.", "rate_limit");
    }
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
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(form)) {
      const m = /^metadata\[(.+)\]$/.exec(k);
      if (m?.[1]) metadata[m[1]] = v;
    }
    const refund: StripeRefund = {
      id: id("re"),
      object: "refund",
      amount,
      currency: payment.currency,
      status: "succeeded",
      payment_intent: payment.paymentIntent,
      charge: payment.charge,
      reason: form.reason ?? null,
      metadata,
      created: Math.floor(Date.now() / 1000),
    };
    created.push(refund);
    if (typeof key === "string" && key)
      idempotent.set(key, { body: fingerprint, status: 200, answer: refund, at: Date.now() });
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
    count("created");
    send(res, 200, refund);
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
    if (req.method === "POST" && url.pathname === "/v1/refunds") {
      if (!(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) {
        count("bad_content_type");
        return error(res, 400, "invalid_request_error", "Bodies are form-encoded.");
      }
      return createRefund(req, res, raw);
    }
    if (req.method === "GET" && url.pathname === "/v1/refunds") {
      count("list");
      const pi = url.searchParams.get("payment_intent");
      const ch = url.searchParams.get("charge");
      const limit = Math.min(100, Math.max(1, Number(url.searchParams.get("limit") ?? 10)));
      const after = url.searchParams.get("starting_after");
      const all = created
        .filter((r) => (pi ? r.payment_intent === pi : ch ? r.charge === ch : true))
        .slice()
        .reverse();
      const start = after ? all.findIndex((r) => r.id === after) + 1 : 0;
      const page = all.slice(start, start + limit);
      return send(res, 200, {
        object: "list",
        url: "/v1/refunds",
        data: page,
        has_more: start + limit < all.length,
      });
    }
    const intent = /^\/v1\/payment_intents\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && intent?.[1]) {
      const p = payments.get(intent[1]);
      if (!p) return error(res, 404, "invalid_request_error", "No such payment_intent.", "resource_missing");
      count("payment_intent");
      const expanded = url.searchParams.getAll("expand[]").includes("latest_charge");
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
  return {
    url: `http://127.0.0.1:${address.port}`,
    secretKey,
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
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
