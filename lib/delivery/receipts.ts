import "server-only";
import { createHash, timingSafeEqual } from "node:crypto";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import type { Principal } from "@/lib/contract/roles";
import type { ReceiptView } from "@/lib/contract/wire";
import {
  getSpentAuthority,
  insertReceipts,
  listReceipts,
  listThreadReceipts,
  type NewReceipt,
} from "@/lib/db/queries/receipts";
import type { DecisionReceipt } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { receiptHmac, receiptKeys } from "@/lib/platform/receipt-keys";
import { type Authorization, termsMatch, termsOf } from "@/lib/shop/authority-terms";

/*
 * Decision receipts (issue 50): a decision binds to what the decider saw. Every decision the ledger records gets a
 * receipt — a digest of the exact payload shown (question, tool and arguments, amounts, the money's destination,
 * policy findings), a digest of the answer, who, when, through which channel, under which agent version, and the
 * effects it authorizes — signed with a server key (lib/platform/receipt-keys.ts). An effect that moves money or changes an
 * account spends a matching authorization when it is recorded (the ledger: lib/shop/refunds.ts, accounts.ts,
 * vouchers.ts) and is delivered only if the receipt still verifies and still matches what is delivered
 * (`checkEffectAuthority`, the dispatcher). A receipt holds no personal data (digests, ids, amounts), so it outlives
 * retention and erasure; `npm run receipts:verify` checks every one offline.
 */

export type { Authorization, NewReceipt };

/** How a decision reached the ledger. */
export type DecisionChannel = "agui" | "decision" | "bulk" | "expiry" | "timer" | "policy" | "system";

/** The signed body of a receipt (version 1). */
export interface ReceiptBody {
  v: 1;
  id: string;
  threadId: string;
  interruptId: string | null;
  action: string;
  /** resolved (answered) or cancelled. */
  status: "resolved" | "cancelled";
  /** sha256 of the canonical JSON of the payload as the ledger recorded it: what the decider was shown. */
  shown: string;
  /** sha256 of the canonical JSON of the answer (null for a cancellation). */
  answer: string | null;
  authorizes: { effect: string; terms: Record<string, unknown> }[];
  by: { id: string; label: string; role: string | null; kind: string };
  channel: DecisionChannel;
  at: string;
  /** The agent and version whose policy let the decision through (`refund@1`). */
  policy: string;
}

const sha256 = (value: unknown) => createHash("sha256").update(canonicalPayload(value), "utf8").digest("hex");

/** A receipt ready to store: its body signed with this process's signing key, its authorizations as it signs them. */
export function signReceipt(body: ReceiptBody): NewReceipt {
  const { signing } = receiptKeys();
  const signature = receiptHmac(canonicalPayload(body), signing.id);
  if (!signature) throw new Error("receipts: no signing key");
  return {
    id: body.id,
    threadId: body.threadId,
    interruptId: body.interruptId,
    body: body as unknown as Record<string, unknown>,
    keyId: signing.id,
    signature,
    authorizes: body.authorizes,
  };
}

/** Why a stored receipt does not verify, or null when it does (its signature under its key, its id, its thread). */
export function receiptProblem(
  row: Pick<DecisionReceipt, "id" | "threadId" | "body" | "keyId" | "signature">,
) {
  const body = row.body as Partial<ReceiptBody> | null;
  if (body?.v !== 1) return "not a version 1 receipt";
  if (body.id !== row.id || body.threadId !== row.threadId) return "its body names another receipt or thread";
  const expected = receiptHmac(canonicalPayload(body), row.keyId);
  if (expected === null) return `signed with key ${row.keyId}, which this process does not have`;
  const given = Buffer.from(row.signature, "hex");
  const wanted = Buffer.from(expected, "hex");
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted))
    return "its signature does not match its body";
  return null;
}

/** What one decision's receipt is made from (its payload and answer as the ledger records them). */
export interface DecisionForReceipt {
  interruptId: string;
  threadId: string;
  action: string;
  payload: unknown;
  status: "resolved" | "cancelled";
  answer: unknown;
  authorizes: Authorization[];
}

/** The receipts of decisions taken together by one principal through one channel, signed, ready to store. */
export function decisionReceipts({
  decisions,
  principal,
  channel,
  policy,
}: {
  decisions: DecisionForReceipt[];
  principal: Pick<Principal, "id" | "label" | "role" | "kind">;
  channel: DecisionChannel;
  policy: string;
}): NewReceipt[] {
  const at = new Date().toISOString();
  return decisions.map((d) => {
    const authorizes = d.status === "resolved" ? d.authorizes : [];
    return signReceipt({
      v: 1,
      id: d.interruptId,
      threadId: d.threadId,
      interruptId: d.interruptId,
      action: d.action,
      status: d.status,
      shown: sha256(d.payload),
      answer: d.status === "resolved" ? sha256(d.answer) : null,
      authorizes: authorizes.map(termsOf),
      by: { id: principal.id, label: principal.label, role: principal.role ?? null, kind: principal.kind },
      channel,
      at,
      policy,
    });
  });
}

/** {@link decisionReceipts}, stored with their authorizations. */
export async function recordDecisionReceipts({
  db,
  ...request
}: Parameters<typeof decisionReceipts>[0] & { db: Queryable }): Promise<void> {
  await insertReceipts({ db, receipts: decisionReceipts(request) });
}

/**
 * The receipt of an automatic approval (a policy that decided by itself, e.g. a refund under the automatic limit):
 * the system principal is its decider. Idempotent by `ref` (the step that decided): a re-run finds it.
 */
export async function recordSystemReceipt({
  db,
  threadId,
  ref,
  action,
  shown,
  authorizes,
  by,
  policy,
}: {
  db: Queryable;
  threadId: string;
  ref: string;
  action: string;
  /** What the policy looked at (its findings): digested, as a person's payload is. */
  shown: unknown;
  authorizes: Authorization[];
  by: { id: `system:${string}`; label: string };
  policy: string;
}): Promise<void> {
  const terms = authorizes.map(termsOf);
  await insertReceipts({
    db,
    receipts: [
      signReceipt({
        v: 1,
        id: `system:${ref}`,
        threadId,
        interruptId: null,
        action,
        status: "resolved",
        shown: sha256(shown),
        answer: sha256({ decision: "approve" }),
        authorizes: terms,
        by: { id: by.id, label: by.label, role: null, kind: "system" },
        channel: "policy",
        at: new Date().toISOString(),
        policy,
      }),
    ],
  });
}

/**
 * Whether an effect about to be delivered is authorized: it spent an authorization of a receipt (recorded with it),
 * the receipt verifies, and the authorization's terms are exactly what is being delivered (`wanted`, read from the
 * effect's payload). Null: deliver it; otherwise the refusal (a code and why), which makes it an operator task.
 */
export async function checkEffectAuthority({
  db,
  effect,
  wanted,
}: {
  db: Queryable;
  effect: { receiptId: string | null; idempotencyKey: string };
  wanted: Authorization;
}): Promise<string | null> {
  if (effect.receiptId === LEGACY_RECEIPT) return null;
  if (!effect.receiptId) return "forbidden:no_receipt: no decision receipt authorizes this effect";
  const spent = await getSpentAuthority({ db, receiptId: effect.receiptId, key: effect.idempotencyKey });
  if (!spent)
    return `forbidden:receipt_mismatch: receipt ${effect.receiptId} authorizes nothing this effect spent`;
  const problem = receiptProblem(spent.receipt);
  if (problem) return `forbidden:receipt_invalid: receipt ${effect.receiptId}: ${problem}`;
  const terms = spent.authorization.terms as Record<string, unknown>;
  const signed = (spent.receipt.body as ReceiptBody).authorizes?.[spent.authorization.idx];
  if (
    !signed ||
    canonicalPayload(signed.terms) !== canonicalPayload(terms) ||
    signed.effect !== spent.authorization.effect
  ) {
    return `forbidden:receipt_mismatch: receipt ${effect.receiptId}'s authorization differs from what it signed`;
  }
  if (!termsMatch(spent.authorization.effect, terms, wanted)) {
    return `forbidden:receipt_mismatch: what is being delivered differs from what receipt ${effect.receiptId} authorized`;
  }
  return null;
}

/** Effects recorded before receipts existed (marked by the migration that added them): delivered as before. */
export const LEGACY_RECEIPT = "legacy:before-receipts";

/** A thread's receipts for its page: each checked, each authorization with whether an effect spent it. */
export async function listReceiptViews({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<ReceiptView[]> {
  return (await listThreadReceipts({ db, threadId })).map((r) => {
    const body = r.body as Partial<ReceiptBody>;
    const problem = receiptProblem(r);
    return {
      id: r.id,
      interruptId: r.interruptId,
      action: String(body.action ?? ""),
      by: String(body.by?.label ?? body.by?.id ?? ""),
      channel: String(body.channel ?? ""),
      at: String(body.at ?? r.createdAt.toISOString()),
      authorizes: r.authorizations.map((a) => ({
        effect: a.effect,
        terms: (({ kid: _kid, ...rest }) => rest)(a.terms as Record<string, unknown>),
        spent: a.spentBy !== null,
      })),
      verified: problem === null,
      problem,
      keyId: r.keyId,
    };
  });
}

/** Every stored receipt checked offline: how many, and each one that does not verify (with why). */
export async function verifyReceipts({ db }: { db: Queryable }): Promise<{
  receipts: number;
  problems: { id: string; threadId: string; problem: string }[];
}> {
  let after = "";
  let receipts = 0;
  const problems: { id: string; threadId: string; problem: string }[] = [];
  for (;;) {
    const batch = await listReceipts({ db, after, limit: 500 });
    if (batch.length === 0) break;
    for (const row of batch) {
      receipts += 1;
      const problem = receiptProblem(row);
      if (problem) problems.push({ id: row.id, threadId: row.threadId, problem });
    }
    after = batch.at(-1)?.id ?? after;
  }
  return { receipts, problems };
}
