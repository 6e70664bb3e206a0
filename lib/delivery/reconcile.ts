import "server-only";
import type Stripe from "stripe";
import { STRIPE_TEST_REF } from "@/lib/contract/wire";
import {
  effectByKey,
  listPaidEffectsSince,
  listPendingPaymentEffects,
  type NewFinding,
} from "@/lib/db/queries/provider";
import type { Effect } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { orderOfPayment } from "@/lib/shop/orders";
import { STRIPE_EFFECT_KEY } from "./connectors/stripe";
import {
  applyProviderWord,
  disputeFinding,
  type ProviderDispute,
  type ProviderState,
} from "./provider-truth";

/*
 * The reconciliation of the ledger with the payment provider, as a payment team does it daily: what the provider holds
 * for a window of time against what the ledger recorded for it. Every difference is a finding (an operator task with
 * both sides), recorded once — its key names the difference, so a second run, on this instance or another, finds
 * nothing new:
 * - missing_in_ledger: the provider holds a refund of ours (our key in its metadata) the ledger does not record as paid;
 * - missing_at_provider: the ledger records a refund paid under an id the provider does not know;
 * - amount_differs: both hold it, with another amount or currency;
 * - outside_console: a refund nobody made here (no key of ours: Stripe's dashboard, another system);
 * - failed_after_success: the ledger says paid, the provider says it failed since (the effect fails: an operator task);
 * - dispute: a payment of one of our orders is disputed.
 * Refunds the provider left pending are asked about too, and settled as it answers (lib/delivery/provider-truth.ts).
 */

/** A refund as the provider holds it. */
export interface ProviderRefund {
  id: string;
  /** Null when the provider does not say (the generic provider's look-up may not). */
  amountCents: number | null;
  currency: string | null;
  status: string;
  failureReason: string | null;
  /** Our effect's idempotency key, when we made it. */
  key: string | null;
  /** The payment it refunds (`pi_…` / `ch_…`), when the provider says. */
  payments: string[];
}

/** What the reconciliation asks the provider. A provider that cannot list is asked about each recorded refund. */
export interface ReconcileSource {
  provider: "stripe" | "http";
  /** Every refund created in the window (Stripe); absent when the provider cannot list. */
  refundsBetween?(since: Date, until: Date): AsyncIterable<ProviderRefund>;
  disputesBetween?(since: Date, until: Date): AsyncIterable<ProviderDispute>;
  /** One refund by the provider's id; null when it does not know it. */
  refundById?(id: string): Promise<ProviderRefund | null>;
  /** One refund by our idempotency key (the generic provider's look-up); null when it has none under it. */
  refundByKey?(key: string): Promise<ProviderRefund | null>;
}

/** What a run compared and found. */
export interface ReconcileResult {
  providerCount: number;
  ledgerCount: number;
  /** Pending refunds settled by what the provider said. */
  settled: number;
  findings: NewFinding[];
}

const bare = (ref: string | null) => (ref ?? "").replace(STRIPE_TEST_REF, "");

/** A state word from a provider's refund status. */
function stateOf(status: string): ProviderState | null {
  if (status === "succeeded") return "succeeded";
  if (status === "failed" || status === "canceled") return status;
  if (status === "pending" || status === "requires_action") return "pending";
  return null;
}

/** Compare the provider's refund with the ledger's, for the window `since` → `until`. */
export async function reconcile({
  db,
  source,
  since,
  until,
  runId,
}: {
  db: Queryable;
  source: ReconcileSource;
  since: Date;
  until: Date;
  runId: string;
}): Promise<ReconcileResult> {
  const findings: NewFinding[] = [];
  const provider = source.provider;
  const ledgerSide = (effect: Effect) => {
    const p = effect.payload as Record<string, unknown>;
    return {
      effectId: effect.id,
      status: effect.status,
      providerRef: effect.providerRef,
      amountCents: typeof p.amountCents === "number" ? p.amountCents : null,
      currency: typeof p.currency === "string" ? p.currency.toUpperCase() : null,
      orderId: typeof p.orderId === "string" ? p.orderId : null,
    };
  };
  const providerSide = (r: ProviderRefund) => ({
    id: r.id,
    amountCents: r.amountCents,
    currency: r.currency?.toUpperCase() ?? null,
    status: r.status,
    ...(r.failureReason ? { failureReason: r.failureReason } : {}),
    ...(r.payments[0] ? { payment: r.payments[0] } : {}),
  });
  const finding = (kind: string, key: string, effect: Effect | null, refund: ProviderRefund | null) => {
    const ledger = effect ? ledgerSide(effect) : null;
    findings.push({
      findingKey: `${provider}:${kind}:${key}`,
      provider,
      kind,
      providerRef: refund?.id ?? null,
      effectId: effect?.id ?? null,
      threadId: effect?.threadId ?? null,
      orderId: ledger?.orderId ?? null,
      ledger,
      providerSide: refund ? providerSide(refund) : null,
      runId,
    });
  };
  const source_ = `reconciliation:${runId}`;

  /** One refund both sides hold: amounts, then states (a settled pending moves; a paid one that failed is found). */
  const compare = async (effect: Effect, refund: ProviderRefund) => {
    const ledger = ledgerSide(effect);
    const differs =
      (refund.amountCents !== null && ledger.amountCents !== refund.amountCents) ||
      (refund.currency !== null && ledger.currency !== refund.currency.toUpperCase());
    if (differs) {
      finding("amount_differs", refund.id, effect, refund);
      return 0;
    }
    const state = stateOf(refund.status);
    if (!state) return 0;
    const wasDelivered = effect.status === "delivered";
    const word = await applyProviderWord({
      db,
      word: {
        provider,
        refs: [effect.providerRef ?? refund.id],
        state,
        reason: refund.failureReason,
        source: source_,
      },
    });
    if (word.outcome !== "moved") return 0;
    if (wasDelivered && word.to === "failed") {
      finding("failed_after_success", refund.id, effect, refund);
      return 0;
    }
    return 1;
  };

  let settled = 0;
  // Refunds the provider left pending, whenever they were made: asked about one by one.
  for (const effect of await listPendingPaymentEffects({ db })) {
    const refund = await lookUp(source, effect);
    if (refund) settled += await compare(effect, refund);
  }

  const ledger = (await listPaidEffectsSince({ db, since, until })).filter((e) => isRefundRef(provider, e));
  let providerCount = 0;
  const seen = new Set<string>();
  if (source.refundsBetween) {
    for await (const refund of source.refundsBetween(since, until)) {
      providerCount++;
      seen.add(refund.id);
      if (!refund.key) {
        const order = await orderOfPayment({ db, refs: refund.payments });
        findings.push({
          findingKey: `${provider}:outside_console:${refund.id}`,
          provider,
          kind: "outside_console",
          providerRef: refund.id,
          orderId: order?.orderId ?? null,
          threadId: order?.threadId ?? null,
          ledger: null,
          providerSide: providerSide(refund),
          runId,
        });
        continue;
      }
      const effect = await effectByKey({ db, key: refund.key });
      // In flight: its dispatcher finds this refund under its key and records it.
      if (effect?.status === "queued" || effect?.status === "sending") continue;
      if (!effect || bare(effect.providerRef) !== refund.id) {
        // Ours, but the ledger does not record it as this refund paid (failed, closed by hand, or never written).
        finding("missing_in_ledger", refund.id, effect, refund);
        continue;
      }
      if (effect.status !== "pending") settled += await compare(effect, refund);
    }
  }
  for (const effect of ledger) {
    const ref = bare(effect.providerRef);
    if (seen.has(ref) || effect.status === "pending") continue;
    const refund = await lookUp(source, effect);
    if (!refund) {
      if (effect.status === "delivered") finding("missing_at_provider", effect.id, effect, null);
      continue;
    }
    if (refund.id !== ref && source.provider === "stripe") continue;
    providerCount += source.refundsBetween ? 0 : 1;
    settled += await compare(effect, refund);
  }

  if (source.disputesBetween) {
    for await (const dispute of source.disputesBetween(since, until)) {
      providerCount++;
      findings.push(await disputeFinding({ db, provider, dispute, runId }));
    }
  }
  return { providerCount, ledgerCount: ledger.length, settled, findings };
}

/** A payment effect paid as a refund this provider can look up (Stripe: `re_…`; not a customer balance credit). */
function isRefundRef(provider: string, effect: Effect): boolean {
  if (provider !== "stripe") return true;
  return bare(effect.providerRef).startsWith("re_");
}

async function lookUp(source: ReconcileSource, effect: Effect): Promise<ProviderRefund | null> {
  const ref = bare(effect.providerRef);
  if (source.refundById && ref.startsWith("re_")) return source.refundById(ref);
  if (source.refundByKey) return source.refundByKey(effect.idempotencyKey);
  return null;
}

/**
 * The generic provider (PAYMENT_URL) as a reconciliation source: its contract has no listing, only the look-up by key
 * (`GET <base>/refunds/by-key/<key>` → `{ id, status?, amount_cents?, currency? }`), so each refund the ledger
 * recorded in the window (and each pending one) is looked up: one it does not know is missing at the provider, one
 * whose status says `failed` after the ledger said paid is found, and amounts are compared when it says them.
 */
export function httpReconcileSource({
  baseUrl,
  timeoutMs,
}: {
  baseUrl: string;
  timeoutMs: number;
}): ReconcileSource {
  const base = baseUrl.replace(/\/+$/, "");
  return {
    provider: "http",
    async refundByKey(key) {
      const res = await fetch(`${base}/refunds/by-key/${encodeURIComponent(key)}`, {
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.status === 404) return null;
      if (!res.ok) throw new Error(`payment provider look-up: HTTP ${res.status}`);
      const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      if (typeof body.id !== "string" || !body.id)
        throw new Error("payment provider look-up: no id in the answer");
      return {
        id: body.id,
        amountCents: Number.isSafeInteger(body.amount_cents) ? (body.amount_cents as number) : null,
        currency: typeof body.currency === "string" ? body.currency : null,
        status: typeof body.status === "string" ? body.status : "succeeded",
        failureReason: typeof body.failure_reason === "string" ? body.failure_reason : null,
        key,
        payments: [],
      };
    },
  };
}

/** Stripe as a reconciliation source, through the official SDK. */
export function stripeReconcileSource(stripe: Stripe): ReconcileSource {
  const refundOf = (r: Stripe.Refund): ProviderRefund => ({
    id: r.id,
    amountCents: r.amount,
    currency: r.currency,
    status: r.status ?? "",
    failureReason: r.failure_reason ?? null,
    key: r.metadata?.[STRIPE_EFFECT_KEY] ?? null,
    payments: [
      typeof r.payment_intent === "string" ? r.payment_intent : (r.payment_intent?.id ?? ""),
      typeof r.charge === "string" ? r.charge : (r.charge?.id ?? ""),
    ].filter(Boolean),
  });
  const window = (since: Date, until: Date) => ({
    gte: Math.floor(since.getTime() / 1000),
    lt: Math.ceil(until.getTime() / 1000),
  });
  return {
    provider: "stripe",
    async *refundsBetween(since, until) {
      for await (const r of stripe.refunds.list({ created: window(since, until), limit: 100 }))
        yield refundOf(r);
    },
    async *disputesBetween(since, until) {
      for await (const d of stripe.disputes.list({ created: window(since, until), limit: 100 }))
        yield {
          id: d.id,
          amount: d.amount,
          currency: d.currency,
          reason: d.reason ?? null,
          status: d.status,
          charge: typeof d.charge === "string" ? d.charge : (d.charge?.id ?? null),
          paymentIntent:
            typeof d.payment_intent === "string" ? d.payment_intent : (d.payment_intent?.id ?? null),
        };
    },
    async refundById(id) {
      try {
        return refundOf(await stripe.refunds.retrieve(id));
      } catch (error) {
        const e = error as { statusCode?: unknown; code?: unknown };
        if (e.statusCode === 404 || e.code === "resource_missing") return null;
        throw error;
      }
    },
  };
}
