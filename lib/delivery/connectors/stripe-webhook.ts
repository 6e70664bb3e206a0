import "server-only";
import Stripe from "stripe";
import { AppError } from "@/lib/contract/errors";
import { STRIPE_TEST_REF } from "@/lib/contract/wire";
import { recordProviderEvent, setProviderEventOutcome } from "@/lib/db/queries/provider";
import type { Queryable } from "@/lib/db/tx";
import { metrics } from "@/lib/platform/observability/metrics";
import {
  applyProviderWord,
  disputeFinding,
  type ProviderState,
  recordFindings,
  type WordOutcome,
} from "../provider-truth";

/*
 * Stripe's webhook: what Stripe says happened to a refund after it answered (a `pending` refund that succeeded or
 * failed, a delivered one that failed later, a dispute on a payment), applied to the ledger. The signature is checked
 * with the SDK against the endpoint's secret before anything else is read; each event is applied once (its id is
 * recorded in the same transaction that applies it: a retried or replayed event changes nothing), and effects only
 * move forward (lib/delivery/provider-truth.ts), so events arriving out of order end where Stripe's last state is.
 *
 * Answers, as Stripe expects: 200 for every event that verified — applied, already applied, about nothing of ours, or
 * of a type this console does not act on (Stripe would otherwise retry it for days) — and 400 for one that does not
 * verify (no row is written). Never 5xx for anything the sender controls.
 */

/** The events that move the ledger; any other verified event is acknowledged and ignored. */
export const STRIPE_EVENT_TYPES = [
  "refund.created",
  "refund.updated",
  "refund.failed",
  "charge.refund.updated",
  "charge.refunded",
  "charge.dispute.created",
] as const;

/** What receiving one event came to. */
export interface WebhookOutcome {
  eventId: string;
  type: string;
  /** moved | unchanged | unmatched | finding | ignored | duplicate */
  outcome: string;
}

/** Stripe's refund status as the ledger's word. */
function stateOf(status: string | null | undefined, type: string): ProviderState | null {
  if (type === "refund.failed") return "failed";
  switch (status) {
    case "succeeded":
      return "succeeded";
    case "failed":
      return "failed";
    case "canceled":
      return "canceled";
    case "pending":
    case "requires_action":
      return "pending";
    default:
      return null;
  }
}

const ID = /^[a-z]{2,8}_[A-Za-z0-9_]{1,200}$/;

/** Verify and parse an event: the SDK checks the signature (HMAC over the raw body) and the timestamp's tolerance. */
export function verifyStripeEvent({
  raw,
  signature,
  secret,
}: {
  raw: string;
  signature: string | null;
  secret: string;
}): Stripe.Event {
  if (!signature)
    throw new AppError("bad_request:signature", "The request carries no Stripe-Signature header.");
  let event: Stripe.Event;
  try {
    event = verifier().webhooks.constructEvent(raw, signature, secret);
  } catch {
    throw new AppError(
      "bad_request:signature",
      "The Stripe signature does not verify against this endpoint's secret (or its timestamp is too old).",
    );
  }
  const object = (event as { data?: { object?: { id?: unknown } } }).data?.object;
  if (
    typeof event.id !== "string" ||
    !ID.test(event.id) ||
    typeof event.type !== "string" ||
    event.type.length > 100 ||
    !object ||
    typeof object !== "object"
  )
    throw new AppError("bad_request:event", "The event is not a Stripe event (no id, type or object).");
  return event;
}

/** The SDK instance that verifies (made once): its key is never used, the endpoint's secret is. */
let sdk: Stripe | undefined;
function verifier(): Stripe {
  sdk ??= new Stripe("sk_webhook_verification", { telemetry: false });
  return sdk;
}

/** The refs a Stripe refund id is recorded under (live, or test mode's prefixed). */
const refsOf = (id: string) => [id, `${STRIPE_TEST_REF}${id}`];

/** Apply one verified event, once. */
export async function applyStripeEvent({
  db,
  event,
}: {
  db: Queryable;
  event: Stripe.Event;
}): Promise<WebhookOutcome> {
  const object = event.data.object as unknown as Record<string, unknown>;
  const objectId = typeof object.id === "string" && ID.test(object.id) ? object.id : null;
  const outcome = await db.transaction(async (tx) => {
    if (
      !(await recordProviderEvent({ db: tx, id: event.id, provider: "stripe", type: event.type, objectId }))
    )
      return "duplicate";
    const source = `webhook:${event.id}`;
    const applied = await applyByType(tx, event.type, object, source);
    await setProviderEventOutcome({ db: tx, id: event.id, outcome: applied });
    return applied;
  });
  metrics().providerEvents.inc({ provider: "stripe", outcome });
  return { eventId: event.id, type: event.type, outcome };
}

async function applyByType(
  db: Queryable,
  type: string,
  object: Record<string, unknown>,
  source: string,
): Promise<string> {
  const refundWord = async (refund: Record<string, unknown>): Promise<WordOutcome | null> => {
    const id = typeof refund.id === "string" && ID.test(refund.id) ? refund.id : null;
    const state = stateOf(typeof refund.status === "string" ? refund.status : null, type);
    if (!id || !state) return null;
    return applyProviderWord({
      db,
      word: {
        provider: "stripe",
        refs: refsOf(id),
        state,
        reason: typeof refund.failure_reason === "string" ? refund.failure_reason : null,
        source,
      },
    });
  };
  switch (type) {
    case "refund.created":
    case "refund.updated":
    case "refund.failed":
    case "charge.refund.updated":
      return summarize([await refundWord(object)]);
    case "charge.refunded": {
      // The charge lists its refunds when Stripe's API version includes them; otherwise the refund events say it.
      const list = (object.refunds as { data?: unknown } | undefined)?.data;
      const refunds = Array.isArray(list) ? list.slice(0, 100) : [];
      const words: (WordOutcome | null)[] = [];
      for (const refund of refunds)
        if (refund && typeof refund === "object")
          words.push(await refundWord(refund as Record<string, unknown>));
      return summarize(words);
    }
    case "charge.dispute.created": {
      const id = typeof object.id === "string" && ID.test(object.id) ? object.id : null;
      if (!id) return "ignored";
      const text = (v: unknown) => (typeof v === "string" && ID.test(v) ? v : null);
      const finding = await disputeFinding({
        db,
        provider: "stripe",
        dispute: {
          id,
          amount: Number.isSafeInteger(object.amount) ? (object.amount as number) : 0,
          currency: typeof object.currency === "string" ? object.currency.slice(0, 8) : "",
          reason: typeof object.reason === "string" ? object.reason.slice(0, 100) : null,
          status: typeof object.status === "string" ? object.status.slice(0, 40) : "",
          charge: text(object.charge),
          paymentIntent: text(object.payment_intent),
        },
      });
      return (await recordFindings({ db, findings: [finding] })) > 0 ? "finding" : "unchanged";
    }
    default:
      return "ignored";
  }
}

/** One word for what an event's refunds came to: moved if any moved, else unchanged if any matched. */
function summarize(words: (WordOutcome | null)[]): string {
  if (words.some((w) => w?.outcome === "moved")) return "moved";
  if (words.some((w) => w?.outcome === "unchanged")) return "unchanged";
  return words.some((w) => w?.outcome === "unmatched") ? "unmatched" : "ignored";
}
