import "server-only";
import { recordAudit } from "@/lib/db/queries/audit";
import {
  effectByProviderRef,
  insertFindings,
  moveEffectAsProviderSaid,
  type NewFinding,
} from "@/lib/db/queries/provider";
import type { Effect } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { metrics } from "@/lib/platform/observability/metrics";
import { orderOfPayment } from "@/lib/shop/orders";
import { observeDelivery } from "./effects";

/*
 * What the payment provider says happened moves the ledger, and only forward: an effect the provider took but had not
 * settled (`pending`) becomes `delivered` when it succeeds and `failed` — an operator task, in words on the thread
 * page — when it fails or is cancelled; a delivered refund that fails afterwards (Stripe: a closed card) fails too. A
 * late word that would move it back (a `pending` after `succeeded`, a `succeeded` after `failed`) changes nothing, so
 * events applied in any order end where the provider's last state is. One mechanism below the webhook and the daily
 * reconciliation alike.
 */

/** A payment's state as its provider says it. */
export type ProviderState = "pending" | "succeeded" | "failed" | "canceled";

/** Who the audit trail says moved it. */
export const PROVIDER_SYSTEM = { id: "system:provider", label: "payment provider", role: null } as const;

/** The error of a refund the provider failed or cancelled (the effects panel words it by this code). */
export const REFUND_FAILED = "provider:refund_failed";

/** A provider's word on one refund or credit of ours. */
export interface ProviderWord {
  provider: string;
  /** The provider's id for it, as the effect records it (without or with Stripe's test-mode prefix). */
  refs: string[];
  state: ProviderState;
  /** Why it failed, in the provider's words (`insufficient_funds`). */
  reason?: string | null;
  /** What said it: `webhook:<event id>` or `reconciliation:<run id>`. */
  source: string;
}

/** What applying a word did to the ledger. */
export type WordOutcome =
  | { outcome: "moved"; effect: Effect; from: string; to: "delivered" | "failed" }
  | { outcome: "unchanged"; effect: Effect }
  | { outcome: "unmatched" };

/** Apply a provider's word on a refund to its effect, forward only. */
export async function applyProviderWord({
  db,
  word,
}: {
  db: Queryable;
  word: ProviderWord;
}): Promise<WordOutcome> {
  const effect = await effectByProviderRef({ db, refs: word.refs });
  if (!effect) return { outcome: "unmatched" };
  const ref = word.refs[0] ?? "";
  if (word.state === "succeeded") {
    if (!(await moveEffectAsProviderSaid({ db, effect, from: ["pending"], to: "delivered" })))
      return { outcome: "unchanged", effect };
    observeDelivery(effect, "delivered");
    await recordAudit({
      db,
      entries: [
        {
          action: "provider_event",
          actor: PROVIDER_SYSTEM,
          threadId: effect.threadId,
          detail: {
            effectId: effect.id,
            providerRef: ref,
            from: "pending",
            to: "delivered",
            source: word.source,
          },
        },
      ],
    });
    return { outcome: "moved", effect, from: "pending", to: "delivered" };
  }
  if (word.state === "failed" || word.state === "canceled") {
    const why = word.reason ? ` (${word.reason.replace(/_/g, " ")})` : "";
    const error = `${REFUND_FAILED}: ${word.provider === "stripe" ? "Stripe" : "the payment provider"}'s refund ${ref} ${word.state === "failed" ? "failed" : "was cancelled"}${why}; the customer did not get it`;
    const from = effect.status;
    // Failed, handled or never taken: nothing to move (a refund reported failed twice is unchanged).
    if (from !== "pending" && from !== "delivered") return { outcome: "unchanged", effect };
    if (!(await moveEffectAsProviderSaid({ db, effect, from: [from], to: "failed", error })))
      return { outcome: "unchanged", effect };
    observeDelivery(effect, "failed", error);
    await recordAudit({
      db,
      entries: [
        {
          action: "effect_failed",
          actor: PROVIDER_SYSTEM,
          threadId: effect.threadId,
          detail: {
            effectId: effect.id,
            kind: effect.kind,
            attempts: effect.attempts,
            error,
            providerRef: ref,
            from,
            source: word.source,
          },
        },
      ],
    });
    return { outcome: "moved", effect, from, to: "failed" };
  }
  // `pending`: the state it already has, or behind it.
  return { outcome: "unchanged", effect };
}

/** Record findings (an operator task each), once; counted and audited. Returns how many were new. */
export async function recordFindings({
  db,
  findings,
}: {
  db: Queryable;
  findings: NewFinding[];
}): Promise<number> {
  const fresh = await insertFindings({ db, findings });
  for (const f of fresh) metrics().reconciliationFindings.inc({ kind: f.kind });
  if (fresh.length > 0)
    await recordAudit({
      db,
      entries: fresh.map((f) => ({
        action: "provider_finding" as const,
        actor: PROVIDER_SYSTEM,
        threadId: f.threadId,
        detail: {
          findingId: f.id,
          kind: f.kind,
          providerRef: f.providerRef,
          effectId: f.effectId,
          orderId: f.orderId,
        },
      })),
    });
  return fresh.length;
}

/** A dispute as the provider holds it. */
export interface ProviderDispute {
  id: string;
  amount: number;
  currency: string;
  reason: string | null;
  status: string;
  charge: string | null;
  paymentIntent: string | null;
}

/** A dispute the provider opened on a payment of one of our orders: an operator task with both sides. */
export async function disputeFinding({
  db,
  provider,
  dispute,
  runId = null,
}: {
  db: Queryable;
  provider: string;
  dispute: ProviderDispute;
  runId?: string | null;
}): Promise<NewFinding> {
  const order = await orderOfPayment({ db, refs: [dispute.paymentIntent ?? "", dispute.charge ?? ""] });
  return {
    findingKey: `dispute:${dispute.id}`,
    provider,
    kind: "dispute",
    providerRef: dispute.id,
    orderId: order?.orderId ?? null,
    threadId: order?.threadId ?? null,
    ledger: order ? { orderId: order.orderId } : null,
    providerSide: {
      id: dispute.id,
      amountCents: dispute.amount,
      currency: dispute.currency.toUpperCase(),
      reason: dispute.reason,
      status: dispute.status,
      payment: dispute.paymentIntent ?? dispute.charge,
    },
    runId,
  };
}
