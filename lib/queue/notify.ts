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
import { emailConnector } from "@/lib/effects/email";
import { env } from "@/lib/env";
import { checkedLookup, isBlockedAddress } from "@/lib/net/webhook-target";

/** How long one attempt may take before another instance may try it again. */
const LEASE_MS = 30_000;
const WEBHOOK_TIMEOUT_MS = 10_000;

/** The signature header of a webhook: `sha256=<hex HMAC-SHA256 of the exact body, keyed with the target's secret>`. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** Back-off before attempt n+1 (2 s, 4 s, 8 s … capped at 5 min), or null after the last attempt. */
function retryIn(attempts: number): number | null {
  return attempts >= env.NOTIFY_MAX_ATTEMPTS ? null : Math.min(300_000, 1_000 * 2 ** attempts);
}

async function sendWebhook(
  n: DueNotification,
): Promise<{ ok: true } | { ok: false; error: string; retry: boolean }> {
  const body = JSON.stringify({ id: n.idempotencyKey, ...n.payload });
  try {
    const status = await postChecked(
      n.target,
      {
        "content-type": "application/json",
        "x-hitl-event": n.event,
        "x-hitl-delivery": n.idempotencyKey,
        ...(n.secret ? { "x-hitl-signature": signBody(n.secret, body) } : {}),
      },
      body,
    );
    if (status >= 200 && status < 300) return { ok: true };
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
 * POST to a webhook target, connecting only to an address that passed the check (lib/net/webhook-target.ts): a
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

async function sendEmail(db: AppDb, n: DueNotification) {
  // About a thread: only those of the role who may see it (a team's escalation stays within the team).
  const threadId = typeof n.payload.threadId === "string" ? n.payload.threadId : undefined;
  const to = await emailsOfRole({ db, role: n.target, threadId, seeAll: rolesSeeingEveryTeam() });
  if (to.length === 0) return { ok: true as const };
  const connector = emailConnector({
    from: env.MAIL_FROM,
    transport: env.SMTP_URL ? { smtpUrl: env.SMTP_URL } : { directory: env.MAIL_DIR },
  });
  const result = await connector.deliver({
    id: n.id,
    idempotencyKey: n.idempotencyKey,
    attempt: n.attempts,
    payload: {
      emailId: n.id,
      to: to.join(", "),
      subject:
        `[console] ${n.event.replace("_", " ")}: ${String(n.payload.title ?? n.payload.subject ?? "")}`.trim(),
      body: JSON.stringify(n.payload, null, 2),
    },
    handedOver: false,
    markHandedOver: async () => {},
  });
  return result.ok ? { ok: true as const } : { ok: false as const, error: result.error, retry: result.retry };
}

/** Deliver due notifications (webhooks signed with HMAC, emails to a role), retrying with back-off. */
export async function deliverNotifications({
  db,
  limit = 20,
}: {
  db: AppDb;
  limit?: number;
}): Promise<number> {
  const due = await claimDueNotifications({ db, limit, leaseMs: LEASE_MS });
  for (const n of due) {
    const result = n.kind === "webhook" ? await sendWebhook(n) : await sendEmail(db, n);
    await settleNotification({
      db,
      id: n.id,
      outcome: result.ok
        ? { ok: true }
        : { ok: false, error: result.error, retryInMs: result.retry ? retryIn(n.attempts) : null },
    });
  }
  return due.length;
}
