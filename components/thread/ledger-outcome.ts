import { type EffectView, formatMoney } from "@/lib/contract/wire";

/*
 * The outcome of a thread as the effect ledger has it — every payment and email of the thread, on every branch —
 * set against what the branch shown decided. A fork does not undo what another branch already paid or sent: the page
 * must say so, and what to do about it, rather than "No refund was made" next to a refund that was paid.
 */

type Values = Record<string, unknown>;

const record = (v: unknown): Values | null => (v && typeof v === "object" ? (v as Values) : null);

/** One effect of the thread, and whether the branch shown made it. */
export interface LedgerLine {
  effect: EffectView;
  /** Made by the branch shown (its state names the effect) or by another branch (or an earlier run) of the thread. */
  onThisBranch: boolean;
  /** Paid or sent, or on its way there (queued, sending, closed as refunded by hand). */
  standing: boolean;
}

export interface LedgerOutcome {
  lines: LedgerLine[];
  /** What this branch decided about the refund, in words ("rejected", "approved €12.00"…), or null. */
  branchDecision: string | null;
  /** Sentences for the operator: a contradiction between this branch and the ledger, and the follow-up. */
  contradictions: { id: string; text: string }[];
}

/** Closings of an operator task that say the effect happened after all (by hand, or it did arrive). */
const DONE_RESOLUTIONS: readonly string[] = ["refunded_manually", "confirmed_delivered"];

/** Whether an effect counts as done (or as good as done, or may be done: unconfirmed) in the world. */
export function isStanding(effect: EffectView): boolean {
  if (effect.status === "failed") return false;
  if (effect.status === "handled") return DONE_RESOLUTIONS.includes(effect.task?.resolution ?? "");
  return true;
}

function amountOf(effect: EffectView): string {
  return effect.summary.replace(/^Refund\s+/, "").replace(/\s+for\s+.*$/, "");
}

/** The branch's refund decision in words, from its state. */
function decisionOf(values: Values): { text: string; rejects: boolean } | null {
  const d = record(values.decision);
  if (!d || typeof d.decision !== "string") return null;
  const currency = String(record(values.order)?.currency ?? "EUR");
  if (d.decision === "reject") return { text: "rejected the refund", rejects: true };
  const amount = typeof d.amountCents === "number" ? ` ${formatMoney(d.amountCents, currency)}` : "";
  return { text: `approved${amount}`, rejects: false };
}

/**
 * The thread's outcome from its effect ledger, seen from the branch whose state is `values` (and whose conversation is
 * `conversation`, when the state shown leaves the messages out). An effect is this branch's when the branch names it:
 * the refund agent's `refund` / `email` fields, or anywhere in the state or the conversation — an agent built from
 * tools gets the id back in the tool's result (effect ids are UUIDs: a mention is never a coincidence).
 */
export function ledgerOutcome(
  values: Values,
  effects: readonly EffectView[],
  conversation?: unknown,
  /**
   * `forked: false`: the thread has one line (nothing was ever forked), so an effect this state does not name was made
   * earlier or later on this same line — history, not a disagreement between branches: no contradiction is raised.
   */
  options: { forked?: boolean } = {},
): LedgerOutcome {
  const mine = new Set(
    [record(values.refund)?.effectId, record(values.email)?.effectId].filter(
      (id): id is string => typeof id === "string",
    ),
  );
  const named = effects.length > 0 ? JSON.stringify([values, conversation ?? null]) : "";
  // Named by its id, or by the record it delivers (an agent may keep the outbox email's id, not the effect's).
  const made = effects.filter(
    (effect) => mine.has(effect.id) || named.includes(effect.id) || named.includes(effect.recordId),
  );
  // A follow-up queued by delivering one of the branch's effects (the email telling the customer an account change is
  // made) is the branch's too: its idempotency key ends with the record it follows.
  const follows = (effect: EffectView) =>
    made.some((m) => m.id !== effect.id && effect.idempotencyKey.endsWith(`/${m.recordId}`));
  const lines = effects.map((effect) => ({
    effect,
    onThisBranch: made.includes(effect) || follows(effect),
    standing: isStanding(effect),
  }));
  const decision = decisionOf(values);
  const contradictions: LedgerOutcome["contradictions"] = [];
  // One line, no branches: nothing elsewhere to disagree with.
  const elsewhere = options.forked === false ? [] : lines.filter((l) => !l.onThisBranch && l.standing);
  const branchPaid = lines.some((l) => l.onThisBranch && l.effect.kind === "payment" && l.standing);
  for (const line of elsewhere.filter((l) => l.effect.kind === "payment")) {
    const paid =
      line.effect.status === "delivered" || line.effect.status === "handled" ? "paid" : "on its way";
    const why = decision?.rejects
      ? "this branch rejected the refund, but that does not take the money back"
      : branchPaid
        ? "this branch pays a refund too, so the customer gets both"
        : "this branch made no refund, but that does not take the money back";
    contradictions.push({
      id: line.effect.id,
      text:
        `A refund of ${amountOf(line.effect)} is already ${paid} from another branch of this thread: ${why}. ` +
        "If it should not stand, reverse it by hand in the payment provider and record that in a correction task.",
    });
  }
  const branchMailed = lines.some((l) => l.onThisBranch && l.effect.kind === "email");
  for (const line of elsewhere.filter((l) => l.effect.kind === "email")) {
    const sent =
      line.effect.status === "delivered" || line.effect.status === "handled"
        ? "was sent"
        : line.effect.status === "unconfirmed"
          ? "may have been sent"
          : "is on its way";
    contradictions.push({
      id: line.effect.id,
      text:
        `${line.effect.summary.replace(/^Email/, "The email")} ${sent} from another branch of this thread` +
        `${branchMailed ? ", as well as this branch's reply" : ""}: a branch cannot unsend it. ` +
        "If it says something this branch does not, write to the customer to correct it.",
    });
  }
  return { lines, branchDecision: decision?.text ?? null, contradictions };
}
