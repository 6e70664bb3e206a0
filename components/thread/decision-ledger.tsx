"use client";

import { useState } from "react";
import { actionLabel } from "@/components/ui/action-label";
import { Button } from "@/components/ui/button";
import { errorMessage, fetchJson, postJson } from "@/components/ui/fetch-json";
import { LocalTime } from "@/components/ui/local-time";
import { showControls } from "@/lib/contract/bidi";
import { principalLabel } from "@/lib/contract/humanize";
import type { SideEffectWarning } from "@/lib/contract/views/history";
import type { DecisionView } from "@/lib/contract/views/thread";
import { summarizeAnswer } from "./answer-summary";
import { DeadlineLine } from "./deadline-line";

const STATUS_STYLE: Record<string, string> = {
  pending: "bg-amber-50 text-amber-950 ring-amber-300",
  resolved: "bg-emerald-50 text-emerald-900 ring-emerald-300",
  superseded: "bg-slate-100 text-slate-800 ring-slate-300",
  cancelled: "bg-slate-100 text-slate-800 ring-slate-300",
};

const STATUS_TEXT: Record<string, string> = {
  pending: "Waiting",
  answered: "Answered",
  resolved: "Decided",
  superseded: "No longer applies",
  cancelled: "Cancelled",
};

/**
 * The decision ledger: every decision this thread asked for, who took it, what they said and when. A supervisor may
 * answer a taken decision differently: a branch from where it was asked asks it again.
 */
export function DecisionLedger({
  decisions,
  currency,
  threadId,
  canBranch = false,
}: {
  decisions: DecisionView[];
  currency?: string;
  threadId?: string;
  /** The user may branch the thread (a supervisor) and no run is active on it. */
  canBranch?: boolean;
}) {
  return (
    <section aria-labelledby="ledger-heading" className="rounded-lg border border-slate-200 bg-white p-5">
      <h2 id="ledger-heading" className="mb-3 text-base font-semibold text-slate-900">
        Decision history
      </h2>
      {decisions.length === 0 ? (
        <p className="text-sm text-slate-700">No decisions yet.</p>
      ) : (
        <ol className="space-y-3" data-testid="ledger">
          {decisions.map((d) => (
            <li
              key={d.interruptId}
              className="border-l-2 border-slate-300 pl-3 text-sm"
              data-testid="ledger-entry"
              data-interrupt-id={d.interruptId}
              data-action={d.action}
              data-status={d.status}
            >
              <p className="flex flex-wrap items-center gap-2">
                <span className="font-medium text-slate-900">{actionLabel(d.action)}</span>
                <span
                  className={`rounded-full px-2 py-0.5 text-xs font-semibold ring-1 ring-inset ${STATUS_STYLE[d.status] ?? STATUS_STYLE.pending}`}
                >
                  {STATUS_TEXT[d.status] ?? d.status}
                </span>
              </p>
              {d.status === "resolved" || d.status === "cancelled" ? (
                <p className="mt-0.5 text-slate-800">
                  <bdi data-testid="ledger-answer">{summarizeAnswer(d.action, d.answer, currency)}</bdi> — by{" "}
                  <bdi className="font-medium" data-testid="ledger-by">
                    {showControls(principalLabel(d.resolvedBy ?? "unknown"))}
                  </bdi>
                  {d.resolvedAt ? (
                    <>
                      , <LocalTime iso={d.resolvedAt} />
                    </>
                  ) : null}
                </p>
              ) : (
                <>
                  <p className="mt-0.5 text-slate-700">
                    {d.status === "pending" ? "Waiting for an operator." : "No longer applies."}
                  </p>
                  {d.status === "pending" && d.dueAt ? <DeadlineLine decision={d} /> : null}
                </>
              )}
              {d.status === "resolved" && canBranch && threadId && d.checkpointId ? (
                <AnswerDifferently
                  threadId={threadId}
                  decision={d}
                  cancels={decisions.filter((o) => o.status === "pending" && o.interruptId !== d.interruptId)}
                />
              ) : null}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/**
 * "Answer differently": branch the thread from where this decision was asked (the question is asked again on the
 * branch, answered like any decision), then show the page again on the new branch. Nothing happens on the first
 * click: it says first what the branch cancels (the decisions waiting now) and what it cannot undo (what the thread
 * already recorded after that point), and branches only when confirmed.
 */
function AnswerDifferently({
  threadId,
  decision,
  cancels,
}: {
  threadId: string;
  decision: DecisionView;
  /** The decisions waiting now, which the branch makes no longer apply. */
  cancels: DecisionView[];
}) {
  const interruptId = decision.interruptId;
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [asking, setAsking] = useState(false);
  const [warnings, setWarnings] = useState<SideEffectWarning[] | null>(null);
  const ask = async () => {
    setAsking(true);
    setProblem(null);
    setWarnings(null);
    try {
      const { warnings } = await fetchJson<{ warnings: SideEffectWarning[] }>(
        `/api/threads/${encodeURIComponent(threadId)}/checkpoints/${encodeURIComponent(decision.checkpointId)}/side-effects`,
      );
      setWarnings(warnings);
    } catch (e) {
      setProblem(errorMessage(e));
      setWarnings([]);
    }
  };
  const branch = async () => {
    setBusy(true);
    setProblem(null);
    try {
      await postJson(
        `/api/threads/${encodeURIComponent(threadId)}/decisions/${encodeURIComponent(interruptId)}/answer-differently`,
        {},
      );
      window.location.reload();
    } catch (e) {
      setProblem(errorMessage(e));
      setBusy(false);
    }
  };
  if (asking)
    return (
      <section
        className="mt-2 space-y-2 rounded-md border border-slate-300 bg-slate-50 p-3"
        aria-label="Answer differently: confirm"
        data-testid="answer-differently-confirm"
      >
        <p className="text-slate-900">
          This branches the thread from where this decision was asked: it is asked again there, and the branch
          goes on from your new answer.
        </p>
        {cancels.length > 0 ? (
          <div data-testid="answer-differently-cancels">
            <p className="font-medium text-slate-900">It cancels what waits now:</p>
            <ul className="list-disc pl-5 text-slate-800">
              {cancels.map((c) => (
                <li key={c.interruptId}>{actionLabel(c.action)} (no longer applies on the branch)</li>
              ))}
            </ul>
          </div>
        ) : (
          <p className="text-slate-700">Nothing waiting now is cancelled.</p>
        )}
        {warnings === null ? (
          <p className="text-slate-700">Reading what the thread already did after this point…</p>
        ) : warnings.length > 0 ? (
          <div data-testid="answer-differently-warnings">
            <p className="font-medium text-slate-900">What the branch cannot undo:</p>
            <ul className="list-disc pl-5 text-slate-800">
              {warnings.map((w) => (
                <li key={w.recordId}>{w.message}</li>
              ))}
            </ul>
          </div>
        ) : null}
        <div className="flex gap-2">
          <Button disabled={busy || warnings === null} onClick={branch} data-testid="answer-differently-go">
            {busy ? "Branching…" : "Branch and answer again"}
          </Button>
          <Button variant="secondary" disabled={busy} onClick={() => setAsking(false)}>
            Cancel
          </Button>
        </div>
        {problem && (
          <p role="alert" className="text-sm text-red-800">
            {problem}
          </p>
        )}
      </section>
    );
  return (
    <div className="mt-1">
      <Button variant="secondary" disabled={busy} onClick={() => void ask()} data-testid="answer-differently">
        Answer differently…
      </Button>
      {problem && (
        <p role="alert" className="mt-1 text-sm text-red-800">
          {problem}
        </p>
      )}
    </div>
  );
}
