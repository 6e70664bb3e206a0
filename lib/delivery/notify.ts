import "server-only";
import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { rolesSeeingEveryTeam } from "@/lib/auth/teams";
import type { AppDb } from "@/lib/db/open";
import {
  claimDueNotifications,
  type DueNotification,
  emailsOfRole,
  settleNotification,
} from "@/lib/db/queries/notifications";
import type { DeliveryResult, EffectConnector, EffectDelivery } from "@/lib/delivery/connector";
import { emailConnector } from "@/lib/delivery/connectors/email";
import { connectorsByKind, deliverDue, type RetryPolicy } from "@/lib/delivery/engine";
import { env } from "@/lib/platform/env";
import { checkedLookup, isBlockedAddress } from "@/lib/platform/net/webhook-target";

const WEBHOOK_TIMEOUT_MS = 10_000;

/** The signature header of a webhook: `sha256=<hex HMAC-SHA256 of the exact body, keyed with the target's secret>`. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/**
 * Notifications' attempts and back-off (the engine's model: 1–2 s, 2–4 s … capped at 5 min); recording an outcome rides
 * out a failover within half the claim's lease, as an effect's does (a webhook delivered is not sent again).
 */
function notifyPolicy(): RetryPolicy {
  return {
    maxAttempts: env.NOTIFY_MAX_ATTEMPTS,
    baseMs: 2_000,
    maxMs: 300_000,
    settleRetryMs: Math.floor(env.EFFECT_LEASE_MS / 2),
  };
}

/** A notification as its channel's connector receives it. */
interface NotificationPayload {
  event: string;
  /** The webhook's URL, or the role whose users are emailed. */
  target: string;
  secret: string | null;
  body: Record<string, unknown>;
}

const notificationOf = (delivery: EffectDelivery) => delivery.payload as unknown as NotificationPayload;

/** Webhooks: the body signed with HMAC-SHA256; 5xx, 408, 429 and network errors are tried again. */
const webhookConnector: EffectConnector = {
  kind: "webhook",
  deliver: (delivery) => sendWebhook(delivery.idempotencyKey, notificationOf(delivery)),
};

async function sendWebhook(idempotencyKey: string, n: NotificationPayload): Promise<DeliveryResult> {
  const body = JSON.stringify({ id: idempotencyKey, ...n.body });
  try {
    const status = await postChecked(
      n.target,
      {
        "content-type": "application/json",
        "x-hitl-event": n.event,
        "x-hitl-delivery": idempotencyKey,
        ...(n.secret ? { "x-hitl-signature": signBody(n.secret, body) } : {}),
      },
      body,
    );
    if (status >= 200 && status < 300) return { ok: true, providerRef: null };
    // 4xx other than 408/429 will not get better by retrying (nor will a redirect: it is not followed).
    const retry = status >= 500 || status === 408 || status === 429;
    return { ok: false, error: `HTTP ${status}`, retry };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // A target that resolves to a blocked address stays blocked: not retried.
    if (code === "EWEBHOOKBLOCKED") return { ok: false, error: (error as Error).message, retry: false };
    return { ok: false, error: error instanceof Error ? error.message : String(error), retry: true };
  }
}

/**
 * POST to a webhook target, connecting only to an address that passed the check (lib/platform/net/webhook-target.ts): a
 * literal IP is checked as is, a name through a lookup that refuses blocked addresses. Resolves with the status.
 */
function postChecked(url: string, headers: Record<string, string>, body: string): Promise<number> {
  const allowed = env.WEBHOOK_ALLOW_PRIVATE;
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) && isBlockedAddress(host, allowed)) {
    return Promise.reject(
      Object.assign(new Error(`refused: ${host} is a blocked address`), { code: "EWEBHOOKBLOCKED" }),
    );
  }
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        lookup: checkedLookup(allowed),
        timeout: WEBHOOK_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`timed out after ${WEBHOOK_TIMEOUT_MS} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** Emails to a role: its users (who may see the thread, when it is about one) through the effects' email channel. */
function roleEmailConnector(db: AppDb): EffectConnector {
  const email = emailConnector({
    from: env.MAIL_FROM,
    transport: env.SMTP_URL ? { smtpUrl: env.SMTP_URL } : { directory: env.MAIL_DIR },
  });
  return {
    kind: "email",
    async deliver(delivery) {
      const n = notificationOf(delivery);
      // About a thread: only those of the role who may see it (a team's escalation stays within the team).
      const threadId = typeof n.body.threadId === "string" ? n.body.threadId : undefined;
      const to = await emailsOfRole({ db, role: n.target, threadId, seeAll: rolesSeeingEveryTeam() });
      if (to.length === 0) return { ok: true, providerRef: null };
      return email.deliver({
        ...delivery,
        payload: {
          emailId: delivery.id,
          to: to.join(", "),
          subject:
            `[console] ${n.event.replace("_", " ")}: ${String(n.body.title ?? n.body.subject ?? "")}`.trim(),
          body: JSON.stringify(n.body, null, 2),
        },
      });
    },
  };
}

/** The notification channels: one connector per target kind. */
export function notificationConnectors(db: AppDb): Map<string, EffectConnector> {
  return connectorsByKind([webhookConnector, roleEmailConnector(db)]);
}

/** Deliver due notifications (webhooks signed with HMAC, emails to a role), retrying with back-off. */
export async function deliverNotifications({
  db,
  limit = 20,
}: {
  db: AppDb;
  limit?: number;
}): Promise<number> {
  return deliverDue<DueNotification>(
    {
      // The same lease as an effect's: how long one attempt may take before another instance may try it again.
      claim: () => claimDueNotifications({ db, limit, leaseMs: env.EFFECT_LEASE_MS }),
      kindOf: (n) => n.kind,
      attemptsOf: (n) => n.attempts,
      delivery: (n) => ({
        id: n.id,
        idempotencyKey: n.idempotencyKey,
        attempt: n.attempts,
        payload: { event: n.event, target: n.target, secret: n.secret, body: n.payload },
        // Nothing to reconcile for a notification: a webhook is told the delivery id, an email may come twice.
        handedOver: false,
        markHandedOver: async () => {},
      }),
      settle: (n, settlement) =>
        settleNotification({
          db,
          id: n.id,
          outcome: settlement.ok
            ? { ok: true }
            : { ok: false, error: settlement.error, retryInMs: settlement.retryInMs },
        }),
    },
    notificationConnectors(db),
    notifyPolicy(),
  );
}
