import { z } from "zod";
import { LocalTime } from "@/components/ui/local-time";
import { humanize } from "@/lib/contract/humanize";
import { type EffectView, formatMoney } from "@/lib/contract/wire";
import { effectStatusText } from "./effects-panel";
import { ledgerOutcome } from "./ledger-outcome";

/** The parts of the refund agent's state the outcome shows; anything else in `values` is ignored. */
const outcomeValues = z.object({
  decision: z
    .object({ decision: z.string(), amountCents: z.number(), note: z.string().optional() })
    .nullish(),
  refund: z
    .object({
      status: z.literal("refused"),
      refundedCents: z.number(),
      refundableCents: z.number(),
    })
    .or(
      z.object({
        id: z.string(),
        amountCents: z.number(),
        currency: z.string(),
        method: z.string(),
        approvedBy: z.string(),
        createdAt: z.string(),
        effectId: z.string().optional(),
      }),
    )
    .nullish(),
  reply: z.object({ subject: z.string(), body: z.string() }).nullish(),
  email: z.object({ status: z.string(), effectId: z.string().optional() }).nullish(),
  /** The account-change agent's result. */
  outcome: z
    .object({
      status: z.enum(["applied", "rejected"]),
      reasons: z.array(z.string()),
      effectId: z.string().nullish(),
    })
    .nullish(),
  change: z.object({ field: z.string(), from: z.string().nullable(), to: z.string() }).nullish(),
});

/**
 * What the thread did, from its effect ledger (every payment and email, on every branch) set against the branch
 * shown: the refund and email this branch made, anything another branch already paid or sent, and — when the two
 * disagree — a plain sentence saying so with what to do about it.
 */
export function OutcomeCard({
  values,
  effects = [],
  conversation,
  forked = true,
}: {
  values: Record<string, unknown>;
  effects?: EffectView[];
  /** The branch's messages (a tool's result names the effect it recorded). */
  conversation?: unknown;
  /** The thread was forked: effects this branch does not name may be another branch's (else: earlier on its line). */
  forked?: boolean;
}) {
  const parsed = outcomeValues.safeParse(values);
  if (!parsed.success) return null;
  const { decision, reply, email, outcome } = parsed.data;
  if (outcome) {
    const applying = outcome.effectId ? effects.find((e) => e.id === outcome.effectId) : undefined;
    return <ChangeOutcome outcome={outcome} change={parsed.data.change ?? null} effect={applying} />;
  }
  const ledger = ledgerOutcome(values, effects, conversation, { forked });
  const refund = parsed.data.refund && !("refundableCents" in parsed.data.refund) ? parsed.data.refund : null;
  const refundRefused =
    parsed.data.refund && "refundableCents" in parsed.data.refund ? parsed.data.refund : null;
  const elsewhere = ledger.lines.filter((l) => !l.onThisBranch);
  if (!refund && !email && !refundRefused && decision?.decision !== "reject" && elsewhere.length === 0)
    return null;
  const order = values.order as { currency?: unknown } | null | undefined;
  const currency = typeof order?.currency === "string" ? order.currency : "EUR";
  const live = (id: string | undefined) => (id ? effects.find((e) => e.id === id) : undefined);
  const payment = live(refund?.effectId);
  const mail = live(email?.effectId);
  const paidElsewhere = elsewhere.some((l) => l.effect.kind === "payment" && l.standing);
  const subject = mail ? subjectOf(mail) : reply?.subject;
  return (
    <section
      aria-labelledby="outcome-heading"
      className="rounded-lg border border-emerald-200 bg-emerald-50/50 p-5"
      data-testid="outcome"
      data-contradictions={ledger.contradictions.length}
    >
      <h2 id="outcome-heading" className="mb-3 text-base font-semibold text-slate-900">
        Outcome
      </h2>
      {ledger.contradictions.length > 0 && (
        <div
          className="mb-3 space-y-2 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950"
          data-testid="ledger-contradictions"
        >
          <p className="font-semibold">This branch and what already happened disagree</p>
          <ul className="list-disc space-y-1 pl-5">
            {ledger.contradictions.map((c) => (
              <li key={c.id} data-testid="ledger-contradiction">
                {c.text}
              </li>
            ))}
          </ul>
        </div>
      )}
      <dl className="space-y-2 text-sm">
        <div
          data-testid="refund-outcome"
          data-payment-status={payment?.status ?? (refund ? "queued" : "none")}
        >
          <dt className="font-medium text-slate-900">Refund on this branch</dt>
          <dd className="text-slate-800">
            {refund ? (
              <>
                {formatMoney(refund.amountCents, refund.currency)} to {humanize(refund.method).toLowerCase()},
                approved by <bdi>{refund.approvedBy}</bdi>, <LocalTime iso={refund.createdAt} />
                {payment ? ` — payment: ${effectStatusText(payment).toLowerCase()}` : ""}
              </>
            ) : refundRefused ? (
              `Not recorded: earlier refunds leave ${formatMoney(refundRefused.refundableCents, currency)} to refund.`
            ) : paidElsewhere ? (
              forked ? (
                "None on this branch — but another branch already refunded this order (see below)."
              ) : (
                "None for this request — an earlier one on this thread was refunded (see below)."
              )
            ) : decision?.decision === "reject" ? (
              "None: the refund was rejected."
            ) : (
              "No refund was made."
            )}
          </dd>
        </div>
        {email && (
          <div data-testid="email-outcome" data-email-status={mail?.status ?? email.status}>
            <dt className="font-medium text-slate-900">Customer email from this branch</dt>
            <dd className="text-slate-800">
              {email.status === "not_sent" ? (
                "Not sent"
              ) : (
                <>
                  {mail ? effectStatusText(mail) : email.status === "sent" ? "Sent" : "Queued"}
                  {subject ? (
                    <>
                      : “<bdi>{subject}</bdi>”
                    </>
                  ) : null}
                </>
              )}
            </dd>
          </div>
        )}
        {elsewhere.length > 0 && (
          <div data-testid="ledger-elsewhere">
            <dt className="font-medium text-slate-900">
              {forked ? "From other branches of this thread" : "Earlier on this thread"}
            </dt>
            <dd>
              <ul className="space-y-1 text-slate-800">
                {elsewhere.map((l) => (
                  <li
                    key={l.effect.id}
                    data-testid="ledger-line"
                    data-kind={l.effect.kind}
                    data-status={l.effect.status}
                  >
                    <bdi>{l.effect.summary}</bdi> — {effectStatusText(l.effect).toLowerCase()}
                  </li>
                ))}
              </ul>
            </dd>
          </div>
        )}
      </dl>
    </section>
  );
}

/** The subject of an email effect, read from its summary (`Email “subject” to address`). */
function subjectOf(effect: EffectView): string | undefined {
  return /^Email “(.*)” to /s.exec(effect.summary)?.[1];
}

/** An account change's result: applied, or rejected with the reviewers' reasons. */
function ChangeOutcome({
  outcome,
  change,
  effect,
}: {
  outcome: { status: "applied" | "rejected"; reasons: string[]; effectId?: string | null };
  change: { field: string; from: string | null; to: string } | null;
  /** The `account_update` effect applying the change, as the effect ledger has it now. */
  effect: EffectView | undefined;
}) {
  const state = !outcome.effectId ? "none" : (effect?.status ?? "queued");
  return (
    <section
      aria-labelledby="outcome-heading"
      className="rounded-lg border border-emerald-200 bg-emerald-50/50 p-5"
      data-testid="change-outcome"
      data-status={outcome.status}
      data-effect-status={state}
    >
      <h2 id="outcome-heading" className="mb-3 text-base font-semibold text-slate-900">
        Outcome
      </h2>
      {change && (
        <p className="mb-2 text-sm text-slate-800" data-testid="change-values">
          {humanize(change.field)}: {change.from ? <bdi>“{change.from}”</bdi> : "(none on file)"} →{" "}
          <bdi>“{change.to}”</bdi>
        </p>
      )}
      <p className="text-sm text-slate-800">
        {outcome.status === "rejected"
          ? `The account change was not made${outcome.reasons.length > 0 ? `: ${outcome.reasons.map((r) => r.trim().replace(/[.;]+$/, "")).join("; ")}.` : "."}`
          : !outcome.effectId
            ? "Both reviews approved (recorded before account changes were applied by the console: nothing was changed here)."
            : state === "delivered"
              ? "Both reviews approved: the change is made in the customer's account, and their confirmation email is queued."
              : state === "failed" || state === "unconfirmed"
                ? "Both reviews approved, but applying the change failed: see the operator task under Side effects."
                : state === "handled"
                  ? "Both reviews approved; the change was handled by hand (see Side effects)."
                  : "Both reviews approved: the change is being applied to the customer's account."}
      </p>
    </section>
  );
}
