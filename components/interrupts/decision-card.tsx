"use client";

import { type ReactNode, useId, useMemo, useState } from "react";
import { type ParsedInterrupt, parseInterruptPayload, validateAnswer } from "@/lib/contract/questions";
import type { OtherWay } from "@/lib/contract/questions/kinds";
import { FallbackView } from "./fallback-view";
import { PayloadView } from "./payload-view";
import { readableError } from "./readable-error";
import { RefundDetails } from "./refund-details";
import { DecisionForm } from "./registry";

/** A pending interrupt as the page holds it: the server's reading of it, and the raw value. */
export interface InterruptItem {
  interruptId: string;
  action: string;
  payload: unknown;
  raw: unknown;
  invalid?: string;
}

/**
 * Read an interrupt through the contract again in the browser (the JSON crossed a network): a typed payload for
 * the registry, or the reason it is not one for the fallback view.
 */
export function readInterrupt(item: InterruptItem): ParsedInterrupt {
  if (item.invalid) return { ok: false, error: item.invalid, raw: item.raw };
  return parseInterruptPayload(item.payload ?? item.raw);
}

/**
 * One pending decision: its form from the registry (or the fallback view), the answer validated against the
 * payload with `validateAnswer` before it leaves the page, and the error when it does not pass. The server checks
 * again; this only saves the operator a round trip.
 */
export function DecisionCard({
  item,
  disabled,
  notice,
  onAnswer,
  readOnly = false,
  refusal = null,
  taken,
  otherWay = null,
}: {
  /** "Answer differently": the other way to answer, which the form opens on (`QuestionKind.otherWay`). */
  otherWay?: OtherWay | null;
  /** The answer somebody already took (a closed card): the form shows it instead of its defaults. */
  taken?: unknown;
  /** Why this operator may not give the acting answer (from `mayDecide`), or null. */
  refusal?: string | null;
  item: InterruptItem;
  disabled: boolean;
  /** Show what is being asked without any control to answer it (a viewer's page). */
  readOnly?: boolean;
  /** Shown above the form (e.g. who decided, when the form is closed). */
  notice?: ReactNode;
  onAnswer: (interruptId: string, answer: unknown) => void;
}) {
  const headingId = useId();
  const parsed = useMemo(() => readInterrupt(item), [item]);
  const [error, setError] = useState<string | null>(null);

  /** True when the answer passed and went to the page; false when it did not (the error says why). */
  const answer = (value: unknown): boolean => {
    if (parsed.ok) {
      const check = validateAnswer(parsed.payload, value);
      if (!check.ok) {
        setError(readableError(check.error));
        return false;
      }
      setError(null);
      onAnswer(item.interruptId, check.answer);
      return true;
    }
    setError(null);
    onAnswer(item.interruptId, value);
    return true;
  };

  const action = parsed.ok ? parsed.payload.action : "fallback";
  return (
    <section
      aria-labelledby={headingId}
      data-testid={`decision-${action}`}
      data-interrupt-id={item.interruptId}
      data-disabled={disabled ? "true" : "false"}
      className="space-y-4 rounded-lg border border-slate-300 bg-white p-5 shadow-sm"
    >
      <h3 id={headingId} tabIndex={-1} data-decision-heading className="text-lg font-semibold text-slate-900">
        {parsed.ok ? parsed.payload.title : "A request this console cannot read"}
      </h3>
      {notice}
      {readOnly ? (
        <div data-testid="decision-read-only" className="space-y-3">
          {parsed.ok && parsed.payload.action === "refund_approval" ? (
            <RefundDetails payload={parsed.payload} />
          ) : (
            <PayloadView payload={parsed.ok ? parsed.payload : item.raw} />
          )}
          <p className="rounded-md bg-slate-100 p-3 text-sm text-slate-800">
            You can read this decision; taking it needs the operator role.
          </p>
        </div>
      ) : parsed.ok ? (
        <DecisionForm
          interruptId={item.interruptId}
          payload={parsed.payload}
          disabled={disabled}
          refusal={refusal}
          onAnswer={answer}
          taken={taken as never}
          otherWay={otherWay}
        />
      ) : (
        <FallbackView
          action={item.action}
          raw={item.raw}
          reason={parsed.error}
          disabled={disabled}
          onAnswer={answer}
        />
      )}
      {error && (
        <p role="alert" className="rounded-md bg-red-50 p-3 text-sm text-red-900" data-testid="answer-error">
          {error}
        </p>
      )}
    </section>
  );
}
