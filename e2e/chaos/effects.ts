import { openThreadJson } from "@/lib/db/vault";
import type { sqlFor } from "../api/client";
import type { TestSmtpServer } from "../support/smtp";

type Sql = ReturnType<typeof sqlFor>;

/**
 * Provider-side counts per authorized effect. "Authorized" comes from the decision ledger (approved refund approvals,
 * sent email confirmations), and deliveries from what the fake provider and the SMTP server received — matched by
 * what they are about (the order refunded, the customer written to), never by our idempotency keys, so an effect
 * the runtime delivered twice under two keys counts as a duplicate.
 */
export interface EffectCounts {
  /** Authorized effects: approved refunds and emails an operator sent. */
  effects: number;
  /** Authorized effects the provider / SMTP server received at least once. */
  delivered: number;
  /** Deliveries beyond the first of an authorized effect. */
  duplicates_at_provider: number;
  /** Authorized effects never received. */
  missing: number;
  /**
   * Of those, the ones the console does not flag: no `unconfirmed` effect (an open operator task) to their recipient.
   * An email handed to SMTP by a server killed before the answer is flagged, not lost in silence; this must be 0.
   */
  missing_unflagged: number;
  /** Effects whose outcome nobody can know (handed over to SMTP, then killed), each an open operator task. */
  unconfirmed_effects: number;
  /** Deliveries no decision authorized. */
  unauthorized_at_provider: number;
  /** Effects the dispatcher gave up on (failed) or still had open when the run ended (unconfirmed ones aside). */
  undelivered_effects: number;
  /** Where duplicates were: refunds at the provider, emails at the SMTP server — and of those, how many carried a
   * Message-ID received before (the same effect sent again after a crash between the server's acceptance and our
   * record of it: SMTP has no key to look up). */
  duplicate_refunds: number;
  duplicate_emails: number;
  duplicate_emails_same_message_id: number;
  missing_refunds_at_provider: number;
  missing_emails: number;
}

/** Wait until no effect is queued or sending (the dispatcher keeps delivering after the runs finished). */
export async function waitForEffectsToSettle(sql: Sql, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await sql.count("effects", "status IN ('queued', 'sending')");
    if (open === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function countProviderDeliveries(
  sql: Sql,
  /** The order of every refund the payment provider created, one entry per refund. */
  refundedOrders: string[],
  smtp: TestSmtpServer,
): Promise<EffectCounts> {
  // One approval authorizes one refund of its order; one confirmation one email to its recipient.
  // The ledger's questions and answers are sealed under each thread's key: opened as the server opens them (the outcome
  // word is plain).
  const refunds = await sql.rows<{ order_id: string }>(
    `SELECT order_id FROM decisions WHERE action = 'refund_approval' AND status = 'resolved'
       AND outcome IN ('approve', 'approve_partial')`,
  );
  const emails = await Promise.all(
    (
      await sql.rows<{ thread_id: string; payload: unknown }>(
        `SELECT thread_id, payload FROM decisions WHERE action = 'confirm_email' AND status = 'resolved'
           AND outcome IN ('send', 'send_edited')`,
      )
    ).map(async (d) => (await openThreadJson(sql, d.thread_id, d.payload)) as { to: string }),
  );
  const authorized = [...refunds.map((r) => `refund ${r.order_id}`), ...emails.map((e) => `email ${e.to}`)];
  const received = [
    ...refundedOrders.map((orderId) => `refund ${orderId}`),
    ...smtp.received.flatMap((m) => m.to.map((to) => `email ${to}`)),
  ];
  const wanted = tally(authorized);
  const got = tally(received);
  let delivered = 0;
  let duplicates = 0;
  let missing = 0;
  let unauthorized = 0;
  for (const [what, n] of wanted) {
    const m = got.get(what) ?? 0;
    delivered += Math.min(n, m);
    missing += Math.max(0, n - m);
    duplicates += Math.max(0, m - n);
  }
  for (const [what, m] of got) if (!wanted.has(what)) unauthorized += m;
  const dup = (prefix: string) =>
    [...wanted].reduce(
      (n, [what, w]) => n + (what.startsWith(prefix) ? Math.max(0, (got.get(what) ?? 0) - w) : 0),
      0,
    );
  const lost = (prefix: string) =>
    [...wanted].reduce(
      (n, [what, w]) => n + (what.startsWith(prefix) ? Math.max(0, w - (got.get(what) ?? 0)) : 0),
      0,
    );
  // An unconfirmed email flags its recipient's missing email (the console shows it as an operator task).
  const flagged = tally(
    (
      await Promise.all(
        (
          await sql.rows<{ thread_id: string; payload: unknown }>(
            "SELECT thread_id, payload FROM effects WHERE kind = 'email' AND status = 'unconfirmed'",
          )
        ).map(async (r) => (await openThreadJson(sql, r.thread_id, r.payload)) as { to?: string }),
      )
    ).map((p) => `email ${p.to}`),
  );
  let unflagged = 0;
  for (const [what, n] of wanted) {
    unflagged += Math.max(0, Math.max(0, n - (got.get(what) ?? 0)) - (flagged.get(what) ?? 0));
  }
  const ids = smtp.received.map((m) => m.messageId ?? "");
  return {
    effects: authorized.length,
    delivered,
    duplicates_at_provider: duplicates,
    missing,
    missing_unflagged: unflagged,
    unconfirmed_effects: await sql.count("effects", "status = 'unconfirmed'"),
    unauthorized_at_provider: unauthorized,
    undelivered_effects: await sql.count("effects", "status NOT IN ('delivered', 'unconfirmed')"),
    duplicate_refunds: dup("refund "),
    duplicate_emails: dup("email "),
    duplicate_emails_same_message_id: ids.length - new Set(ids).size,
    missing_refunds_at_provider: lost("refund "),
    missing_emails: lost("email "),
  };
}

function tally(items: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of items) out.set(item, (out.get(item) ?? 0) + 1);
  return out;
}
