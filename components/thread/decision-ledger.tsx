"use client";

import { useState } from "react";
import { actionLabel } from "@/components/ui/action-label";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { LocalTime } from "@/components/ui/local-time";
import { showControls } from "@/lib/contract/bidi";
import { principalLabel } from "@/lib/contract/humanize";
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
              {d.status === "resolved" && canBranch && threadId ? (
                <AnswerDifferently threadId={threadId} interruptId={d.interruptId} />
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
 * branch, answered like any decision), then show the page again on the new branch.
 */
function AnswerDifferently({ threadId, interruptId }: { threadId: string; interruptId: string }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
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
  return (
    <div className="mt-1">
      <Button variant="secondary" disabled={busy} onClick={branch} data-testid="answer-differently">
        {busy ? "Branching…" : "Answer differently"}
      </Button>
      {problem && (
        <p role="alert" className="mt-1 text-sm text-red-800">
          {problem}
        </p>
      )}
    </div>
  );
}
