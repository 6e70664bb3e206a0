"use client";

import { useState } from "react";
import { controlClass, FieldLabel, FieldMessage } from "@/components/ui/field";
import { BUDGET_LIMIT_LABELS, BUDGET_MAX, formatBudget } from "@/lib/contract/budget-contract";
import { ApproveRejectForm } from "./approve-reject-form";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

const isCost = (limit: string) => limit.endsWith("_cost_micros");

/**
 * A run reached a spending limit: raise the limit for this thread (the run goes on from the model call that waits),
 * or stop the run with a reason. Cost limits are typed in dollars, stored in millionths.
 */
export function RunBudgetForm(props: DecisionFormProps<"run_budget">) {
  const { payload, taken } = props;
  const form = useDecisionForm(props, { rejectReason: "Say why the run is stopped." });
  const { id } = form;
  const cost = isCost(payload.limit);
  const suggested = Math.max(payload.budget, payload.used) * 2;
  const initial = taken?.decision === "raise" ? taken.to : suggested;
  const [text, setText] = useState(cost ? String(initial / 1_000_000) : String(initial));
  const value = cost ? Math.round(Number(text) * 1_000_000) : Number(text);
  const error = !/^\d+(\.\d+)?$/.test(text.trim())
    ? "Write a number."
    : !Number.isInteger(value) || value <= payload.used
      ? `The new limit must be more than the ${formatBudget(payload.limit, payload.used)} already spent.`
      : value > BUDGET_MAX
        ? `At most ${formatBudget(payload.limit, BUDGET_MAX)}.`
        : null;
  const { spent } = payload;
  return (
    <div className="space-y-4">
      <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm text-slate-800">
        <dt className="font-medium">Limit reached</dt>
        <dd data-testid="budget-limit">
          {formatBudget(payload.limit, payload.budget)} ({BUDGET_LIMIT_LABELS[payload.limit]})
        </dd>
        <dt className="font-medium">Spent</dt>
        <dd data-testid="budget-used">{formatBudget(payload.limit, payload.used)}</dd>
        <dt className="font-medium">This run</dt>
        <dd>
          {formatBudget("run_tokens", spent.runTokens)}
          {spent.runCostMicros !== undefined && ` · ${formatBudget("run_cost_micros", spent.runCostMicros)}`}
        </dd>
        <dt className="font-medium">This thread</dt>
        <dd>
          {formatBudget("thread_tokens", spent.threadTokens)}
          {spent.threadCostMicros !== undefined &&
            ` · ${formatBudget("thread_cost_micros", spent.threadCostMicros)}`}
        </dd>
      </dl>
      <div>
        <FieldLabel
          htmlFor={`${id}-to`}
          hint={cost ? "(US dollars, for this thread)" : "(tokens, for this thread)"}
        >
          New limit
        </FieldLabel>
        <input
          id={`${id}-to`}
          data-testid="budget-to"
          inputMode="decimal"
          value={text}
          disabled={form.closed}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-to-error` : undefined}
          onChange={(e) => setText(e.target.value)}
          className={controlClass}
        />
        {error && (
          <FieldMessage id={`${id}-to-error`} error>
            {error}
          </FieldMessage>
        )}
      </div>
      <ApproveRejectForm
        form={form}
        approveDisabled={error !== null}
        approveLabel={error ? "Raise the limit" : `Raise to ${formatBudget(payload.limit, value)}`}
        rejectLabel="Stop the run"
        approveTestId="budget-raise"
        rejectTestId="budget-stop"
        approve={{ decision: "raise", to: value, ...form.note.withNote }}
        reject={(reason) => ({ decision: "stop", note: reason })}
      />
    </div>
  );
}
