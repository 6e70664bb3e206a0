import { AppError } from "@/lib/contract/errors";
import { applyStripeEvent, verifyStripeEvent } from "@/lib/delivery/connectors/stripe-webhook";
import { json, route } from "@/lib/http/route";
import { env } from "@/lib/platform/env";
import { readBodyText } from "@/lib/platform/http/http";

export const dynamic = "force-dynamic";

/** Stripe's events are a few KB; a body far larger is not one. */
const MAX_EVENT_BYTES = 512 * 1024;

/**
 * Stripe's webhook endpoint (lib/delivery/connectors/stripe-webhook.ts): public — Stripe signs, it does not sign in —
 * and checked by its signature against STRIPE_WEBHOOK_SECRET before anything is applied. 404 when no secret is set;
 * 400 for a missing or wrong signature (nothing written); 413 above 512 KB; 200 for every verified event, applied once.
 */
export const POST = route(
  { name: "POST /api/webhooks/stripe", access: "public" },
  async ({ request, database }) => {
    const secret = env.STRIPE_WEBHOOK_SECRET;
    if (!secret) throw new AppError("not_found:webhook", "No Stripe webhook is configured on this server.");
    const raw = await readBodyText(request, MAX_EVENT_BYTES);
    const event = verifyStripeEvent({ raw, signature: request.headers.get("stripe-signature"), secret });
    const applied = await applyStripeEvent({ db: database.db, event });
    return json({ received: true, ...applied });
  },
);
