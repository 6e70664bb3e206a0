"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { LocalTime } from "@/components/ui/local-time";
import type { FindingView, ReconciliationView } from "@/lib/contract/views/reconciliation";
import { formatMoney } from "@/lib/contract/wire";

/** One side of a difference in words: amount, status and ids, or that this side holds nothing. */
function side(values: Record<string, unknown> | null, none: string): string {
  if (!values) return none;
  const amount =
    typeof values.amountCents === "number"
      ? formatMoney(values.amountCents, typeof values.currency === "string" ? values.currency : "EUR")
      : null;
  const parts = [
    amount,
    typeof values.status === "string" ? values.status : null,
    typeof values.reason === "string" ? `reason: ${values.reason.replace(/_/g, " ")}` : null,
    typeof values.failureReason === "string" ? `failure: ${values.failureReason.replace(/_/g, " ")}` : null,
    typeof values.id === "string" ? values.id : null,
    typeof values.providerRef === "string" ? values.providerRef : null,
    typeof values.orderId === "string" ? values.orderId : null,
  ].filter(Boolean);
  return parts.join(" · ") || none;
}

/** The report: the schedule, the findings with their task, the last runs. */
export function ReconciliationReport({ view, canRun }: { view: ReconciliationView; canRun: boolean }) {
  const [findings, setFindings] = useState<FindingView[]>(view.findings);
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const provider = view.provider === "stripe" ? "Stripe" : "the payment provider";

  const close = async (finding: FindingView) => {
    setBusy(finding.id);
    setMessage(null);
    try {
      const closed = await postJson<FindingView>(`/api/reconciliation/findings/${finding.id}`, {
        action: "mark_handled",
      });
      setFindings((all) => all.map((f) => (f.id === closed.id ? closed : f)));
    } catch (error) {
      setMessage(errorMessage(error));
    } finally {
      setBusy(null);
    }
  };
  const runNow = async () => {
    setBusy("run");
    setMessage(null);
    try {
      await postJson("/api/reconciliation/run", {});
      window.location.reload();
    } catch (error) {
      setMessage(errorMessage(error));
      setBusy(null);
    }
  };

  return (
    <div className="space-y-5">
      <section className="rounded-lg border border-slate-200 bg-white p-4" aria-label="Schedule">
        <p className="text-sm text-slate-800" data-testid="reconciliation-schedule">
          {view.provider === null
            ? "Payments are simulated here: there is no provider to compare with."
            : view.everyMs === null
              ? `Compared with ${provider} only when an admin asks (RECONCILE_SCHEDULE=off).`
              : `Compared with ${provider} by the server, one instance at a time (RECONCILE_SCHEDULE).`}{" "}
          {view.provider === "stripe" &&
            (view.webhook
              ? "Stripe's webhook moves refunds as Stripe settles them."
              : "No Stripe webhook is set (STRIPE_WEBHOOK_SECRET): pending refunds are settled by the reconciliation.")}
        </p>
        {canRun && view.provider !== null && (
          <Button className="mt-3" onClick={runNow} disabled={busy !== null}>
            {busy === "run" ? "Reconciling…" : "Reconcile now"}
          </Button>
        )}
      </section>

      {message && (
        <p role="alert" className="text-sm text-red-800">
          {message}
        </p>
      )}

      <section className="rounded-lg border border-slate-200 bg-white p-4" aria-label="Differences">
        <h2 className="text-base font-semibold text-slate-900">
          Differences <span className="font-normal text-slate-700">({view.openFindings} open)</span>
        </h2>
        {findings.length === 0 ? (
          <p className="mt-3 text-sm text-slate-700">No differences found.</p>
        ) : (
          <ul className="mt-3 divide-y divide-slate-100" data-testid="findings">
            {findings.map((f) => (
              <li key={f.id} className="py-3 text-sm" data-testid="finding" data-kind={f.kind}>
                <div className="flex flex-wrap items-baseline justify-between gap-2">
                  <span className="font-medium text-slate-900">{f.title}</span>
                  <span className="text-xs text-slate-700">
                    Found <LocalTime iso={f.createdAt} />
                    {f.status === "handled" && ` · closed by ${f.resolvedBy ?? "someone"}`}
                  </span>
                </div>
                <dl className="mt-1 grid grid-cols-1 gap-x-4 sm:grid-cols-[max-content_1fr]">
                  <dt className="text-slate-700">This console</dt>
                  <dd>{side(f.ledger, "nothing recorded")}</dd>
                  <dt className="text-slate-700">{f.provider === "stripe" ? "Stripe" : "Provider"}</dt>
                  <dd>{side(f.providerSide, "nothing held")}</dd>
                </dl>
                <div className="mt-1 flex flex-wrap items-center gap-3">
                  {f.threadId && (
                    <a
                      href={`/threads/${encodeURIComponent(f.threadId)}`}
                      className="text-sky-800 underline underline-offset-2"
                    >
                      Open the thread
                    </a>
                  )}
                  {f.status === "open" && (
                    <Button variant="secondary" onClick={() => close(f)} disabled={busy !== null}>
                      {busy === f.id ? "Closing…" : "Mark handled"}
                    </Button>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="rounded-lg border border-slate-200 bg-white p-4" aria-label="Last runs">
        <h2 className="text-base font-semibold text-slate-900">Last runs</h2>
        {view.runs.length === 0 ? (
          <p className="mt-3 text-sm text-slate-700">Not run yet.</p>
        ) : (
          <table className="mt-3 w-full text-left text-sm" data-testid="reconciliation-runs">
            <caption className="sr-only">The last reconciliation runs</caption>
            <thead>
              <tr className="text-slate-700">
                <th scope="col" className="py-1 font-medium">
                  Started
                </th>
                <th scope="col" className="py-1 font-medium">
                  Outcome
                </th>
                <th scope="col" className="py-1 font-medium">
                  Read (provider / ledger)
                </th>
                <th scope="col" className="py-1 font-medium">
                  New differences
                </th>
              </tr>
            </thead>
            <tbody>
              {view.runs.map((r) => (
                <tr key={r.id} className="border-t border-slate-100">
                  <td className="py-1">
                    <LocalTime iso={r.startedAt} />
                  </td>
                  <td className="py-1">
                    {r.outcome === "ok"
                      ? "Done"
                      : r.outcome === "failed"
                        ? `Failed: ${r.error ?? ""}`
                        : "Running"}
                  </td>
                  <td className="py-1 tabular-nums">
                    {r.providerCount} / {r.ledgerCount}
                  </td>
                  <td className="py-1 tabular-nums">{r.found}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
