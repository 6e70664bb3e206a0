"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { LocalTime } from "@/components/ui/local-time";
import { humanize, principalLabel } from "@/lib/contract/humanize";
import { type EffectTaskAction, type EffectView, STRIPE_TEST_REF } from "@/lib/contract/wire";

const STATUS_STYLE: Record<string, string> = {
  queued: "bg-slate-100 text-slate-800 ring-slate-300",
  sending: "bg-sky-50 text-sky-900 ring-sky-300",
  pending: "bg-amber-50 text-amber-900 ring-amber-300",
  delivered: "bg-emerald-50 text-emerald-900 ring-emerald-300",
  failed: "bg-red-50 text-red-900 ring-red-300",
  unconfirmed: "bg-amber-50 text-amber-900 ring-amber-300",
  handled: "bg-slate-100 text-slate-800 ring-slate-300",
};

const ACTION_LABEL: Record<EffectTaskAction, string> = {
  retry: "Retry delivery",
  refunded_manually: "Refunded manually",
  mark_handled: "Mark handled",
  confirmed_delivered: "It arrived",
};

/** A refund or credit Stripe holds (`re_…`, `cbtxn_…`, in test mode under the test prefix). */
function isStripeRef(ref: string | null): boolean {
  return /^(re|cbtxn)_/.test((ref ?? "").replace(STRIPE_TEST_REF, ""));
}

/** An effect's delivery status in words. */
export function effectStatusText(effect: EffectView): string {
  switch (effect.status) {
    case "queued":
      return effect.attempts === 0 ? "Queued" : `Queued: retrying after ${effect.attempts} failed attempt(s)`;
    case "sending":
      return `Sending (attempt ${effect.attempts})`;
    case "pending":
      // Taken, not settled: never "Delivered" until the provider says it succeeded.
      return isStripeRef(effect.providerRef)
        ? "Pending at Stripe: not settled yet"
        : "Pending at the payment provider: not settled yet";
    case "delivered":
      // A simulator's "delivery" reached nobody: say so, never "Delivered".
      return effect.simulated
        ? effect.providerRef?.startsWith(STRIPE_TEST_REF)
          ? "Stripe test mode: refunded in Stripe's test data, no real money moved"
          : effect.kind === "payment"
            ? "Simulated: no payment provider is set, nothing was paid"
            : "Simulated: no mail server is set, written to a file"
        : "Delivered";
    case "failed": {
      // Refused before anything was sent: the ledger or the dispatcher found no decision that authorized it.
      const code = effect.lastError?.split(":", 2).join(":") ?? "";
      if (code === "forbidden:no_receipt")
        return "Held, never sent: no decision on this thread authorized it";
      if (code === "forbidden:destination")
        return "Held, never sent: it goes to another customer than this thread's";
      if (code === "forbidden:receipt_mismatch" || code === "forbidden:receipt_invalid")
        return "Refused before sending: it does not match the decision that authorized it";
      if (code === "provider:refund_failed")
        return "Failed at the payment provider: the refund did not reach the customer";
      return `Failed after ${effect.attempts} attempt(s)`;
    }
    case "unconfirmed":
      return "Unconfirmed: may not have arrived";
    case "handled":
      return `Closed: ${humanize(effect.task?.resolution ?? "handled").toLowerCase()}`;
  }
}

/**
 * What this thread did to the outside world: each payment and email, how its delivery stands (attempts, last error,
 * the provider's id), and for a failed or unconfirmed one the operator task — retry, refunded by hand, or mark handled.
 */
export function EffectsPanel({
  threadId,
  effects,
  canAct,
  onActed,
}: {
  threadId: string;
  effects: EffectView[];
  canAct: boolean;
  onActed: (effect: EffectView) => void;
}) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (effects.length === 0) return null;
  const act = async (effect: EffectView, action: EffectTaskAction) => {
    setBusy(effect.id);
    setError(null);
    try {
      onActed(await postJson<EffectView>(`/api/threads/${threadId}/effects/${effect.id}`, { action }));
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };
  return (
    <section aria-labelledby="effects-heading" className="rounded-lg border border-slate-200 bg-white p-5">
      <h2 id="effects-heading" className="mb-3 text-base font-semibold text-slate-900">
        Side effects
      </h2>
      <ol className="space-y-3" data-testid="effects">
        {effects.map((effect) => (
          <li
            key={effect.id}
            className="border-l-2 border-slate-300 pl-3 text-sm"
            data-testid="effect"
            data-effect-id={effect.id}
            data-kind={effect.kind}
            data-status={effect.status}
            data-attempts={effect.attempts}
          >
            <p className="flex flex-wrap items-center gap-2">
              <span className="font-medium text-slate-900">{effect.summary}</span>
              <span
                data-testid="effect-status"
                className={`rounded-full px-2 py-0.5 text-xs font-semibold ring-1 ring-inset ${STATUS_STYLE[effect.status]}`}
              >
                {effectStatusText(effect)}
              </span>
            </p>
            <p className="mt-0.5 text-slate-700">
              Attempts: <span data-testid="effect-attempts">{effect.attempts}</span>
              {effect.deliveredAt && (
                <>
                  {" "}
                  · delivered <LocalTime iso={effect.deliveredAt} />
                </>
              )}
              {effect.providerRef && effect.status === "delivered" && (
                <>
                  {" "}
                  · provider id{" "}
                  <span data-raw className="font-mono text-xs">
                    {effect.providerRef}
                  </span>
                </>
              )}
            </p>
            {effect.lastError && effect.status === "unconfirmed" && (
              <p className="mt-0.5 text-amber-900" data-testid="effect-error">
                {effect.lastError}
              </p>
            )}
            {effect.lastError && effect.status !== "delivered" && effect.status !== "unconfirmed" && (
              <p className="mt-0.5 text-red-900" data-testid="effect-error">
                Last error: {effect.lastError}
              </p>
            )}
            {effect.task && (
              <div className="mt-2" data-testid="effect-task" data-open={effect.task.open ? "true" : "false"}>
                {effect.task.open ? (
                  <>
                    <p className="font-medium text-red-900">
                      {effect.status === "unconfirmed"
                        ? "Operator task: nobody knows whether it arrived. Check the mail server's log or ask the recipient: confirm it arrived, send it again, or mark it handled (not needed)."
                        : "Operator task: the delivery failed. Retry it, or record what was done instead."}
                    </p>
                    {canAct && (
                      <div className="mt-1 flex flex-wrap gap-2">
                        {effect.task.actions.map((action) => (
                          <Button
                            key={action}
                            variant={action === "retry" ? "primary" : "secondary"}
                            disabled={busy === effect.id}
                            data-testid={`effect-${action}`}
                            onClick={() => void act(effect, action)}
                          >
                            {ACTION_LABEL[action]}
                          </Button>
                        ))}
                      </div>
                    )}
                  </>
                ) : (
                  <p className="text-slate-700">
                    {humanize(effect.task.resolution ?? "").replace(/^./, (c) => c.toUpperCase())} by{" "}
                    {principalLabel(effect.task.resolvedBy ?? "unknown")}
                    {effect.task.resolvedAt && (
                      <>
                        , <LocalTime iso={effect.task.resolvedAt} />
                      </>
                    )}
                  </p>
                )}
              </div>
            )}
          </li>
        ))}
      </ol>
      {error && (
        <p role="alert" className="mt-2 text-sm text-red-900">
          {error}
        </p>
      )}
    </section>
  );
}
