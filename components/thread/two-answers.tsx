"use client";

import type { Message } from "@ag-ui/core";
import { useEffect, useState } from "react";
import { actionLabel } from "@/components/ui/action-label";
import { errorMessage, fetchJson } from "@/components/ui/fetch-json";
import { principalLabel } from "@/lib/contract/humanize";
import type { CheckpointView } from "@/lib/contract/views/checkpoint";
import type { DecisionView, ThreadView } from "@/lib/contract/views/thread";
import { type EffectView, formatMoney } from "@/lib/contract/wire";
import { summarizeAnswer } from "./answer-summary";
import { effectStatusText } from "./effects-panel";
import { ledgerOutcome } from "./ledger-outcome";

type Values = Record<string, unknown>;
const record = (v: unknown): Values | null => (v && typeof v === "object" ? (v as Values) : null);

/**
 * What a line of the thread did, in the three things a customer feels: money or the account, the email, what they
 * were told. The email comes from the effect ledger (the line's own effects, and what delivering them queued), so it
 * says "delivered" only once it is.
 */
function outcomeOf(values: Values, messages: readonly Message[], effects: readonly EffectView[]) {
  const refund = record(values.refund);
  const outcome = record(values.outcome);
  const money = refund
    ? refund.status === "refused"
      ? "Nothing refunded (beyond what is left of the order)"
      : `${formatMoney(Number(refund.amountCents), String(refund.currency ?? "EUR"))} refunded`
    : outcome
      ? outcome.status === "applied"
        ? "The change is made"
        : "Nothing changed"
      : values.change
        ? "Nothing changed yet"
        : "Nothing refunded";
  const mails = ledgerOutcome(values, effects, messages).lines.filter(
    (l) => l.onThisBranch && l.effect.kind === "email",
  );
  const email = record(values.email);
  const reply = [...messages].reverse().find((m) => m.role === "assistant" && typeof m.content === "string");
  const firstLine = (text: string) =>
    text
      .trim()
      .split("\n")
      .find((line) => line.trim() && !/^hello\b/i.test(line.trim())) ?? text.trim();
  const draft = typeof reply?.content === "string" && reply.content.trim() ? firstLine(reply.content) : null;
  // What the customer was told is what reached them: for a line that emails, the email's words once it is delivered
  // (the approved revision, which may be an edit of the draft) — never a draft that was not sent.
  const sent = record(values.reply)?.body;
  const sentLine = typeof sent === "string" && sent.trim() ? firstLine(sent) : draft;
  const arrived = mails.some(
    (l) =>
      l.effect.status === "delivered" ||
      (l.effect.status === "handled" && l.effect.task?.resolution === "confirmed_delivered"),
  );
  const underway = mails.some((l) => ["queued", "sending", "unconfirmed"].includes(l.effect.status));
  const emails = "email" in values || "reply" in values || mails.length > 0;
  const told = !emails
    ? (draft ?? "Nothing yet")
    : arrived && sentLine
      ? sentLine
      : underway && sentLine
        ? `Nothing yet: being sent — “${sentLine}”`
        : email?.status === "not_sent"
          ? "Nothing: the reply was not sent"
          : draft
            ? "Nothing yet: a draft, not sent"
            : "Nothing yet";
  return {
    money,
    email:
      mails.length > 0
        ? mails.map((l) => `${l.effect.summary} — ${effectStatusText(l.effect)}`).join("; ")
        : email
          ? `Email ${String(email.status ?? "queued")}`
          : "No email yet",
    told,
  };
}

/**
 * "Answer differently": this branch asks a decision again that the other line answered. The two answers and what each
 * line did — money, the account, what the customer was told — side by side, as of now (the branch may still be
 * running or waiting). Effects the first answer recorded keep their course; the ledger above never pays twice.
 */
export function TwoAnswers({
  threadId,
  answering,
  values,
  messages,
  decisions,
  effects,
  currency,
}: {
  /** The thread's effect ledger, live (every branch's). */
  effects: readonly EffectView[];
  threadId: string;
  answering: NonNullable<ThreadView["answeringDifferently"]>;
  values: Values;
  messages: readonly Message[];
  decisions: readonly DecisionView[];
  currency?: string;
}) {
  const [other, setOther] = useState<CheckpointView | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const { otherHead } = answering;
  useEffect(() => {
    if (!otherHead) return;
    const controller = new AbortController();
    fetchJson<CheckpointView>(
      `/api/threads/${encodeURIComponent(threadId)}/checkpoints/${encodeURIComponent(otherHead)}`,
      { signal: controller.signal },
    )
      .then(setOther)
      .catch((e) => {
        if (!controller.signal.aborted) setProblem(errorMessage(e));
      });
    return () => controller.abort();
  }, [threadId, otherHead]);

  // This branch's answer: the newest decision of the same kind asked since (the question asked again).
  const mine = [...decisions]
    .reverse()
    .find((d) => d.action === answering.action && d.interruptId !== answering.interruptId);
  const sides = [
    {
      key: "other",
      title: "The other line",
      answer: `${summarizeAnswer(answering.action, answering.answer, currency)} — by ${principalLabel(answering.resolvedBy ?? "unknown")}`,
      outcome: other ? outcomeOf(other.values, other.messages, effects) : null,
    },
    {
      key: "this",
      title: "This branch",
      answer:
        mine?.status === "resolved"
          ? `${summarizeAnswer(mine.action, mine.answer, currency)} — by ${principalLabel(mine.resolvedBy ?? "unknown")}`
          : "Not answered yet",
      outcome: outcomeOf(values, messages, effects),
    },
  ];
  return (
    <section
      aria-labelledby="two-answers-heading"
      className="rounded-lg border border-sky-300 bg-sky-50 p-5"
      data-testid="two-answers"
    >
      <h2 id="two-answers-heading" className="text-base font-semibold text-slate-900">
        Answered differently: {actionLabel(answering.action)}
      </h2>
      <p className="mt-1 text-sm text-slate-800">
        This branch asks the question again. What each answer led to, side by side — what the other line
        already paid or sent stays done.
      </p>
      {problem && (
        <p role="alert" className="mt-2 text-sm text-red-800">
          {problem}
        </p>
      )}
      <div className="mt-3 grid gap-3 sm:grid-cols-2">
        {sides.map((side) => (
          <div
            key={side.key}
            className="rounded-md border border-slate-200 bg-white p-3 text-sm"
            data-testid={`${side.key}-outcome`}
          >
            <h3 className="font-semibold text-slate-900">{side.title}</h3>
            <dl className="mt-2 space-y-1">
              <dt className="text-xs font-semibold text-slate-600">Answer</dt>
              <dd data-testid={`${side.key}-answer`}>
                <bdi>{side.answer}</bdi>
              </dd>
              <dt className="text-xs font-semibold text-slate-600">Money</dt>
              <dd data-testid={`${side.key}-money`}>{side.outcome?.money ?? "…"}</dd>
              <dt className="text-xs font-semibold text-slate-600">Email</dt>
              <dd data-testid={`${side.key}-email`}>{side.outcome?.email ?? "…"}</dd>
              <dt className="text-xs font-semibold text-slate-600">Told the customer</dt>
              <dd data-testid={`${side.key}-told`}>
                <bdi>{side.outcome?.told ?? "…"}</bdi>
              </dd>
            </dl>
          </div>
        ))}
      </div>
    </section>
  );
}
