import { ledgerOutcome } from "@/components/thread/ledger-outcome";
import { type EffectView, formatMoney } from "@/lib/contract/wire";

type Values = Record<string, unknown>;

const record = (v: unknown): Values | null => (v && typeof v === "object" ? (v as Values) : null);

const DECIDED: Record<string, string> = {
  approve: "Approved",
  approve_partial: "Approved a smaller amount:",
  reject: "Rejected",
};

/** The decision in words, and — when it approved money — whether any was refunded as of this checkpoint. */
function decisionText(values: Values): string {
  const d = record(values.decision);
  if (!d) return "none yet";
  const by = d.decidedBy === "policy" ? "by policy" : "by an operator";
  const amount =
    typeof d.amountCents === "number" && d.amountCents > 0 ? ` ${formatMoney(d.amountCents)}` : "";
  const text = `${DECIDED[String(d.decision)] ?? String(d.decision)}${amount} (${by})`;
  if (d.decision === "reject") return text;
  const refund = record(values.refund);
  if (!refund) return `${text}; nothing refunded yet`;
  if (refund.status === "refused") return `${text}; nothing refunded (beyond what is left of the order)`;
  return text;
}

function refundText(values: Values): string {
  const r = record(values.refund);
  if (!r) return "none";
  if (r.status === "refused") return "refused (beyond what is left of the order total)";
  const amount =
    typeof r.amountCents === "number" ? formatMoney(r.amountCents, String(r.currency ?? "EUR")) : "?";
  return `${amount} recorded${r.duplicate ? " (already recorded before: not paid twice)" : ""}`;
}

function emailText(values: Values, effects: readonly EffectView[]): string {
  const e = record(values.email);
  if (!e) return "not sent yet";
  if (e.status === "not_sent") return "not sent (operator chose not to)";
  // Older checkpoints said "sent" when they had only queued it.
  if (e.status === "sent") return "sent";
  // A checkpoint is a snapshot of its step: it says what the graph knew then, and the ledger what became of it since.
  const live = effects.find((x) => x.id === e.effectId);
  const since =
    live?.status === "delivered"
      ? "; delivered since"
      : live?.status === "failed"
        ? "; delivery failed since (see the thread's side effects)"
        : live?.status === "unconfirmed"
          ? "; handed to the mail server since, arrival not confirmed"
          : "";
  return `queued for delivery at this step${since}`;
}

/**
 * The refund agent's outcome as of this checkpoint — decision, refund, email — so two branches compare at a glance.
 * Shown only for state that has these keys.
 */
export function OutcomeFacts({
  values,
  effects = [],
  forked = true,
}: {
  values: Values;
  effects?: readonly EffectView[];
  /** The thread has more than one branch: only then can this checkpoint and the ledger disagree across branches. */
  forked?: boolean;
}) {
  if (!("decision" in values || "refund" in values || "email" in values)) return null;
  const ledger = ledgerOutcome(values, effects, undefined, { forked });
  const facts = [
    { label: "Decision", text: decisionText(values), testId: "checkpoint-decision" },
    { label: "Refund", text: refundText(values), testId: "checkpoint-refund" },
    { label: "Email", text: emailText(values, effects), testId: "checkpoint-email" },
  ];
  return (
    <div className="space-y-2">
      <dl className="grid grid-cols-1 gap-2 sm:grid-cols-3" data-testid="checkpoint-outcome">
        {facts.map((f) => (
          <div key={f.label} className="rounded-md bg-slate-50 px-3 py-2">
            <dt className="text-xs font-semibold text-slate-600">{f.label}</dt>
            <dd className="text-sm text-slate-900" data-testid={f.testId}>
              {f.text}
            </dd>
          </div>
        ))}
      </dl>
      {ledger.contradictions.length > 0 && (
        <div
          className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950"
          data-testid="checkpoint-contradictions"
        >
          <p className="font-semibold">What this checkpoint says and what already happened disagree</p>
          <ul className="list-disc space-y-1 pl-5">
            {ledger.contradictions.map((c) => (
              <li key={c.id}>{c.text}</li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
