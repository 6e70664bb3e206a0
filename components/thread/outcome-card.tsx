import { z } from "zod";
import { humanize } from "@/components/interrupts/humanize";
import { LocalTime } from "@/components/ui/local-time";
import { type EffectView, formatMoney } from "@/lib/wire";
import { effectStatusText } from "./effects-panel";

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
  outcome: z.object({ status: z.enum(["applied", "rejected"]), reasons: z.array(z.string()) }).nullish(),
});

/**
 * What the run did so far: the refund it recorded and what became of the customer email. The state says an effect
 * is queued; its live delivery status comes from `effects` (the dispatcher delivers it after the run).
 */
export function OutcomeCard({
  values,
  effects = [],
}: {
  values: Record<string, unknown>;
  effects?: EffectView[];
}) {
  const parsed = outcomeValues.safeParse(values);
  if (!parsed.success) return null;
  const { decision, reply, email, outcome } = parsed.data;
  if (outcome) return <ChangeOutcome outcome={outcome} />;
  const refund = parsed.data.refund && !("refundableCents" in parsed.data.refund) ? parsed.data.refund : null;
  const refundRefused =
    parsed.data.refund && "refundableCents" in parsed.data.refund ? parsed.data.refund : null;
  if (!refund && !email && !refundRefused && decision?.decision !== "reject") return null;
  const order = values.order as { currency?: unknown } | null | undefined;
  const currency = typeof order?.currency === "string" ? order.currency : "EUR";
  const live = (id: string | undefined) => (id ? effects.find((e) => e.id === id) : undefined);
  const payment = live(refund?.effectId);
  const mail = live(email?.effectId);
  return (
    <section
      aria-labelledby="outcome-heading"
      className="rounded-lg border border-emerald-200 bg-emerald-50/50 p-5"
    >
      <h2 id="outcome-heading" className="mb-3 text-base font-semibold text-slate-900">
        Outcome
      </h2>
      <dl className="space-y-2 text-sm">
        <div
          data-testid="refund-outcome"
          data-payment-status={payment?.status ?? (refund ? "queued" : "none")}
        >
          <dt className="font-medium text-slate-900">Refund</dt>
          <dd className="text-slate-800">
            {refund ? (
              <>
                {formatMoney(refund.amountCents, refund.currency)} to {humanize(refund.method).toLowerCase()},
                approved by {refund.approvedBy}, <LocalTime iso={refund.createdAt} />
                {payment ? ` — payment: ${effectStatusText(payment).toLowerCase()}` : ""}
              </>
            ) : refundRefused ? (
              `Not recorded: earlier refunds leave ${formatMoney(refundRefused.refundableCents, currency)} to refund.`
            ) : (
              "No refund was made."
            )}
          </dd>
        </div>
        {email && (
          <div data-testid="email-outcome" data-email-status={mail?.status ?? email.status}>
            <dt className="font-medium text-slate-900">Customer email</dt>
            <dd className="text-slate-800">
              {email.status === "not_sent"
                ? "Not sent"
                : `${mail ? effectStatusText(mail) : email.status === "sent" ? "Sent" : "Queued"}${reply ? `: “${reply.subject}”` : ""}`}
            </dd>
          </div>
        )}
      </dl>
    </section>
  );
}

/** An account change's result: applied, or rejected with the reviewers' reasons. */
function ChangeOutcome({ outcome }: { outcome: { status: "applied" | "rejected"; reasons: string[] } }) {
  return (
    <section
      aria-labelledby="outcome-heading"
      className="rounded-lg border border-emerald-200 bg-emerald-50/50 p-5"
      data-testid="change-outcome"
      data-status={outcome.status}
    >
      <h2 id="outcome-heading" className="mb-3 text-base font-semibold text-slate-900">
        Outcome
      </h2>
      <p className="text-sm text-slate-800">
        {outcome.status === "applied"
          ? "Both reviews approved: the account change was applied and the customer told."
          : `The account change was rejected${outcome.reasons.length > 0 ? `: ${outcome.reasons.join("; ")}` : "."}`}
      </p>
    </section>
  );
}
