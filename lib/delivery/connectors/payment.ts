import "server-only";
import { createHash } from "node:crypto";
import { formatMoney } from "@/lib/contract/wire";
import { singleton } from "@/lib/platform/singleton";
import { type EffectConnector, type EffectDelivery, type EffectKind, refused, retryable } from "../connector";

/** A refund: said with its amount and order; a failed one may be refunded by hand and recorded so. */
export const paymentKind: EffectKind = {
  kind: "payment",
  summary: (p) =>
    typeof p.amountCents === "number"
      ? `${p.method === "store_credit" ? "Store credit" : "Refund"} ${formatMoney(p.amountCents, String(p.currency ?? "EUR"))} for ${String(p.orderId ?? "the order")}`
      : "payment effect",
  // A refund the provider failed after taking it: a retry under its key would find that same failed refund.
  taskActions: (_status, lastError) =>
    lastError?.startsWith("provider:refund_failed")
      ? ["refunded_manually", "mark_handled"]
      : ["retry", "refunded_manually", "mark_handled"],
  authority: (p) => ({ effect: "refund", orderId: String(p.orderId), amountCents: Number(p.amountCents) }),
};

/** The refund the payment provider is asked to pay (the `payment` effect's payload). */
export interface RefundOrder {
  refundId: string;
  orderId: string;
  amountCents: number;
  currency: string;
  method: string;
}

/** A provider's answer to one request. `unknown`: it may or may not have applied it (a timeout, a cut connection). */
export type GatewayAnswer =
  /** `pending`: taken, not settled yet (the provider says later whether it succeeded). */
  | { kind: "applied"; providerRef: string; pending?: boolean }
  | { kind: "not_found" }
  | { kind: "transient"; error: string }
  | { kind: "unknown"; error: string }
  | { kind: "refused"; error: string };

/**
 * The payment provider's contract: create a refund under an idempotency key, and find the refund made under a key
 * (by the key itself where the provider can look it up; otherwise among the payment's refunds, which is why the
 * refund asked for is passed too).
 */
export interface PaymentGateway {
  /**
   * Whether this provider can pay this refund without a person (Stripe needs the order's payment for a card refund and
   * its customer for store credit): what the agent may tell the customer. Absent: it can.
   */
  handles?(refund: Pick<RefundOrder, "orderId" | "method">): Promise<boolean>;
  createRefund(key: string, refund: RefundOrder): Promise<GatewayAnswer>;
  findRefund(key: string, refund: RefundOrder): Promise<GatewayAnswer>;
}

/**
 * Refunds through a payment provider. Every request carries the effect's idempotency key. A retry after an attempt
 * whose outcome is unknown (a timeout after the request was sent, a dropped connection, a crash mid-send) looks the
 * key up first and only sends again when the provider has no refund under it; a 409 duplicate is success too.
 */
export function paymentConnector(gateway: PaymentGateway): EffectConnector {
  return {
    kind: paymentKind.kind,
    async deliver(effect: EffectDelivery) {
      const refund = effect.payload as unknown as RefundOrder;
      if (effect.attempt > 1) {
        const found = await gateway.findRefund(effect.idempotencyKey, refund);
        if (found.kind === "applied") return appliedResult(found);
        if (found.kind === "refused") return refused(found.error);
        if (found.kind !== "not_found") return retryable(`lookup before retrying: ${explain(found)}`);
      }
      const answer = await gateway.createRefund(effect.idempotencyKey, refund);
      if (answer.kind === "applied") return appliedResult(answer);
      if (answer.kind === "refused") return refused(answer.error);
      return retryable(explain(answer));
    },
  };
}

function appliedResult(answer: { providerRef: string; pending?: boolean }) {
  return { ok: true as const, providerRef: answer.providerRef, ...(answer.pending ? { pending: true } : {}) };
}

function explain(answer: GatewayAnswer): string {
  if (answer.kind === "applied") return `applied (${answer.providerRef})`;
  if (answer.kind === "not_found") return "not found";
  return answer.kind === "unknown" ? `outcome unknown: ${answer.error}` : answer.error;
}

/**
 * The provider's HTTP API: `POST <base>/refunds` (JSON, `Idempotency-Key` header) answers 200/201 `{ id }` when it
 * applied the refund and 409 `{ id }` when that key was applied before; `GET <base>/refunds/by-key/<key>` answers 200
 * `{ id }` or 404. 5xx and 429 are transient; other 4xx are refusals. The answer may say the refund's `status`
 * (`pending`, `succeeded`, `failed`, `canceled`) and its `amount_cents` and `currency`: a `pending` refund is recorded
 * pending and settled by the reconciliation's look-up by key (lib/delivery/reconcile.ts).
 */
export function httpPaymentGateway({
  baseUrl,
  timeoutMs,
}: {
  baseUrl: string;
  timeoutMs: number;
}): PaymentGateway {
  const base = baseUrl.replace(/\/+$/, "");
  const call = async (path: string, init: RequestInit): Promise<GatewayAnswer> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      // Sent or not, we cannot tell: the next attempt looks the key up before sending again.
      return { kind: "unknown", error: networkError(error, timeoutMs) };
    }
    let body: { id?: unknown; message?: unknown; status?: unknown } = {};
    try {
      body = (await res.json()) as typeof body;
    } catch {
      // An answer without JSON: judged by its status alone.
    }
    const id = typeof body.id === "string" && body.id ? body.id : null;
    // A provider that says a refund's state: `pending` is taken, not paid; `failed` / `canceled` is a refusal.
    if ((res.ok || res.status === 409) && id && (body.status === "failed" || body.status === "canceled"))
      return { kind: "refused", error: `the provider's refund ${id} ${String(body.status)}` };
    if ((res.ok || res.status === 409) && id)
      return { kind: "applied", providerRef: id, ...(body.status === "pending" ? { pending: true } : {}) };
    if (res.status === 404 && init.method === "GET") return { kind: "not_found" };
    if (res.ok || res.status === 409)
      return { kind: "unknown", error: `${res.status} without the provider's id` };
    const what = `HTTP ${res.status}${typeof body.message === "string" ? `: ${body.message.slice(0, 200)}` : ""}`;
    if (res.status >= 500 || res.status === 429) return { kind: "transient", error: what };
    return { kind: "refused", error: what };
  };
  return {
    createRefund: (key, refund) =>
      call("/refunds", {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({
          amount_cents: refund.amountCents,
          currency: refund.currency,
          order_id: refund.orderId,
          method: refund.method,
          reference: refund.refundId,
        }),
      }),
    findRefund: (key) => call(`/refunds/by-key/${encodeURIComponent(key)}`, { method: "GET" }),
  };
}

function networkError(error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && error.name === "TimeoutError")
    return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  const detail = typeof cause?.code === "string" ? cause.code : (cause?.message ?? (error as Error)?.message);
  return `connection failed (${String(detail ?? "unknown error")})`;
}

/**
 * The embedded default: a provider simulated in this process (so `npm start` needs no payment account). It keeps the
 * contract — one refund per key — in memory, and always answers.
 */
export function simulatedPaymentGateway(): PaymentGateway {
  // Process-wide: every bundle's gateway answers from the same refunds.
  const applied = singleton("simulated-payments", () => new Map<string, string>());
  return {
    async createRefund(key) {
      const known = applied.get(key);
      if (known) return { kind: "applied", providerRef: known };
      const id = `sim_re_${createHash("sha256").update(key).digest("hex").slice(0, 20)}`;
      applied.set(key, id);
      return { kind: "applied", providerRef: id };
    },
    async findRefund(key) {
      const known = applied.get(key);
      return known ? { kind: "applied", providerRef: known } : { kind: "not_found" };
    },
  };
}
