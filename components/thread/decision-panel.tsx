"use client";

import type { ResumeEntry } from "@ag-ui/client";
import { useCallback, useEffect, useRef, useState } from "react";
import { useUser } from "@/components/auth/user-context";
import { DecisionCard, readInterrupt } from "@/components/interrupts/decision-card";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { LocalTime } from "@/components/ui/local-time";
import { humanizeStep } from "@/components/ui/status-badge";
import { type OtherWay, questionKind } from "@/lib/contract/questions/kinds";
import { hasRole } from "@/lib/contract/roles";
import { MODEL_TIMED_OUT, RUN_CANCELLED, RUN_TIMED_OUT } from "@/lib/contract/run-stops";
import type { ClaimView } from "@/lib/contract/views/claims";
import { ClaimButton, ClaimNotice } from "./claim-notice";
import { DecidedElsewhere } from "./decided-elsewhere";
import type { ThreadState } from "./thread-state";
import { useDecisionKeys } from "./use-decision-keys";

type Send = (request: { resume?: ResumeEntry[]; actor: string }) => Promise<boolean>;
type Decide = (interruptId: string, answer: unknown) => Promise<void>;

/**
 * The decisions the agent waits for. One pending interrupt: its answer resumes the run (through HttpAgent), once —
 * the page's in-flight guard ignores a second send and the form is disabled from the first click on. Several at once
 * (parallel reviews): each card is answered on its own, by whoever may take it (`decide`); a card answered by anyone
 * stays, closed, saying who, until the last one resumes the run. Forms somebody else took stay visible, closed.
 */
export function DecisionPanel({
  state,
  actor,
  send,
  decide,
  refusals = {},
  claims = {},
  onClaimChange = () => {},
}: {
  /** Per pending interrupt id, why this operator may not give the acting answer (`mayDecide`). */
  refusals?: Record<string, string>;
  /** Per pending interrupt id, who is handling it (live claims). */
  claims?: Record<string, ClaimView>;
  /** This operator took a claim over: read the claims again. */
  onClaimChange?: () => void;
  state: ThreadState;
  actor: string;
  send: Send;
  decide: Decide;
}) {
  const [answers, setAnswers] = useState<Record<string, unknown>>({});
  const user = useUser();
  const canDecide = hasRole(user?.role, "operator");
  const container = useRef<HTMLDivElement>(null);
  // j/k between the cards, a / r to the answer that acts / rejects (Enter gives it): a viewer has nothing to answer.
  useDecisionKeys(useCallback(() => (canDecide ? container.current : null), [canDecide]));
  const pendingKey = state.pending.map((p) => p.interruptId).join(",");
  const shownKey = useRef(pendingKey);

  // A new decision after a run: move focus to it, unless the operator is busy elsewhere on the page.
  useEffect(() => {
    if (shownKey.current === pendingKey) return;
    shownKey.current = pendingKey;
    const active = document.activeElement;
    if (!pendingKey || (active && active !== document.body && !container.current?.contains(active))) return;
    container.current?.querySelector<HTMLElement>("[data-decision-heading]")?.focus();
  }, [pendingKey]);

  const onAnswer = (interruptId: string, answer: unknown) => {
    if (state.pending.length > 1) {
      void decide(interruptId, answer);
      return;
    }
    const next = { ...answers, [interruptId]: answer };
    if (!state.pending.every((p) => p.interruptId in next)) {
      setAnswers(next);
      return;
    }
    setAnswers({});
    const resume = state.pending.map(
      (p): ResumeEntry => ({ interruptId: p.interruptId, status: "resolved", payload: next[p.interruptId] }),
    );
    void send({ resume, actor: actor.trim() || "operator" });
  };

  const waiting = state.pending.length > 1;
  return (
    <section aria-labelledby="decisions-heading" className="space-y-4" data-testid="decision-panel">
      <h2 id="decisions-heading" className="text-base font-semibold text-slate-900">
        {state.pending.length > 1 ? `Decisions needed (${state.pending.length})` : "Decision"}
      </h2>
      <div ref={container} className="space-y-4">
        {waiting && (
          <p className="text-sm text-slate-700">
            Each decision is taken on its own, by whoever may take it; the agent goes on once all are in.
          </p>
        )}
        {state.pending.map((item) => {
          const queued = item.interruptId in answers;
          const open = state.pending.filter(
            (p) => !p.answeredBy && p.interruptId !== item.interruptId,
          ).length;
          // Someone else's claim closes the form until this operator takes it over.
          const claim = canDecide && !item.answeredBy ? claims[item.interruptId] : undefined;
          const mine = claim?.userId === user?.id;
          return (
            <DecisionCard
              key={item.interruptId}
              item={item}
              readOnly={!canDecide}
              refusal={refusals[item.interruptId] ?? null}
              otherWay={otherWayOf(state, item)}
              disabled={
                !canDecide ||
                state.status === "needs_attention" ||
                state.sending ||
                queued ||
                Boolean(claim && !mine) ||
                Boolean(item.answeredBy) ||
                state.ownIds.includes(item.interruptId)
              }
              onAnswer={onAnswer}
              notice={
                item.answeredBy ? (
                  <AnsweredNotice by={item.answeredBy} at={item.answeredAt} others={open} />
                ) : queued ? (
                  <QueuedNotice
                    onChange={() => setAnswers(({ [item.interruptId]: _dropped, ...rest }) => rest)}
                  />
                ) : claim ? (
                  <ClaimNotice claim={claim} mine={mine} onTakenOver={onClaimChange} />
                ) : canDecide ? (
                  <ClaimButton interruptId={item.interruptId} onClaimed={onClaimChange} />
                ) : null
              }
            />
          );
        })}
        {state.pending.length === 0 && (
          <NothingPending state={state} actor={actor} send={send} canRun={canDecide} />
        )}
        {state.closed.map((item) => {
          const decision = state.decisions.find((d) => d.interruptId === item.interruptId);
          return (
            <DecisionCard
              key={`closed-${item.interruptId}`}
              item={item}
              disabled
              onAnswer={() => {}}
              taken={item.conflict?.answer ?? decision?.answer ?? undefined}
              notice={<DecidedElsewhere item={item} decision={decision} />}
            />
          );
        })}
      </div>
    </section>
  );
}

/**
 * On a branch made to answer a decision differently, the question asked again opens on the other way to answer it:
 * the opposite of what the other line answered (from the question kind). Other questions open as usual.
 */
function otherWayOf(state: ThreadState, item: ThreadState["pending"][number]): OtherWay | null {
  const differently = state.answeringDifferently;
  if (!differently || item.interruptId !== differently.askedAgain) return null;
  const answer = differently.answer;
  if (!answer || typeof answer !== "object") return null;
  const parsed = readInterrupt(item);
  if (!parsed.ok) return null;
  return (
    questionKind(differently.action)?.otherWay(parsed.payload as never, answer as Record<string, unknown>) ??
    null
  );
}

function AnsweredNotice({ by, at, others }: { by: string; at?: string; others: number }) {
  return (
    <p
      role="status"
      className="rounded-md bg-emerald-50 p-3 text-sm text-emerald-950"
      data-testid="answered-notice"
    >
      <strong className="font-semibold">{by}</strong> answered this
      {at ? (
        <>
          {" "}
          at <LocalTime iso={at} />
        </>
      ) : null}
      .{" "}
      {others > 0
        ? `Waiting for ${others === 1 ? "the other decision" : `${others} other decisions`}.`
        : "The agent goes on now."}
    </p>
  );
}

function QueuedNotice({ onChange }: { onChange: () => void }) {
  return (
    <div className="flex items-center gap-3 rounded-md bg-indigo-50 p-3 text-sm text-indigo-950">
      <span>Answer kept: it is sent with the other decisions.</span>
      <Button variant="secondary" onClick={onChange}>
        Change
      </Button>
    </div>
  );
}

function NothingPending({
  state,
  actor,
  send,
  canRun,
}: {
  state: ThreadState;
  actor: string;
  send: Send;
  canRun: boolean;
}) {
  const box = "rounded-lg border border-slate-200 bg-white p-5 text-sm text-slate-800";
  if (state.status === "running" || state.sending) {
    const step = state.steps.at(-1);
    return (
      <div className={`${box} flex flex-wrap items-center justify-between gap-3`}>
        <p data-testid="agent-working">The agent is working{step ? ` (${humanizeStep(step)})` : ""}…</p>
        {canRun && state.activeRunId && <StopRun threadId={state.threadId} runId={state.activeRunId} />}
      </div>
    );
  }
  if (state.status === "idle") {
    return (
      <div className={`${box} space-y-3`}>
        <p>The agent has not started on this ticket yet.</p>
        {canRun && (
          <Button data-testid="start-run" onClick={() => void send({ actor: actor.trim() || "operator" })}>
            Start the agent
          </Button>
        )}
      </div>
    );
  }
  if (state.status === "stopped") {
    // Stopped on purpose: said as it is, neutral — not a failure.
    return (
      <div className={`${box} space-y-3`} data-testid="stopped-panel">
        <p>
          {state.runError?.message || "The run was stopped."} Nothing is waiting for a decision. Continuing
          carries on from the last saved step; nothing already done (a refund, an email) is done twice.
        </p>
        {canRun && (
          <Button data-testid="retry-run" onClick={() => void send({ actor: actor.trim() || "operator" })}>
            Continue
          </Button>
        )}
      </div>
    );
  }
  if (state.status === "failed") {
    return (
      <div className={`${box} space-y-3`}>
        <p>
          {state.runError && [RUN_CANCELLED, RUN_TIMED_OUT, MODEL_TIMED_OUT].includes(state.runError.code)
            ? state.runError.message
            : `The run failed${state.runError ? `: ${state.runError.message}` : "."}`}{" "}
          Nothing is waiting for a decision. Trying again continues from the last saved step; nothing already
          done (a refund, an email) is done twice.
        </p>
        {canRun && (
          <Button data-testid="retry-run" onClick={() => void send({ actor: actor.trim() || "operator" })}>
            Try again
          </Button>
        )}
      </div>
    );
  }
  return (
    <p className={box} data-testid="nothing-pending">
      {state.status === "completed"
        ? "Nothing left to decide: the thread is complete."
        : "Nothing to decide right now."}
    </p>
  );
}

/**
 * Stop the run (operators and up): the graph is aborted on whichever instance runs it and the run ends "Stopped by
 * …"; the thread stays at its last saved step, where "Try again" continues it. The page learns the end from the run's
 * stream (RUN_ERROR), like any other end.
 */
function StopRun({ threadId, runId }: { threadId: string; runId: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const stop = async () => {
    setBusy(true);
    setError(null);
    try {
      await postJson(
        `/api/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/cancel`,
        {},
      );
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  return (
    <div className="flex flex-wrap items-center gap-2">
      <Button variant="secondary" disabled={busy} onClick={() => void stop()} data-testid="stop-run">
        {busy ? "Stopping…" : "Stop the run"}
      </Button>
      {error && (
        <p role="alert" className="w-full text-red-800" data-testid="stop-run-error">
          {error}
        </p>
      )}
    </div>
  );
}
