"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { controlClass, FieldLabel, FieldMessage } from "@/components/ui/field";
import { refundableCents } from "@/lib/contract/questions";
import { formatMoney } from "@/lib/contract/wire";
import { parseAmountToCents } from "./amount";
import { ApproveRejectForm } from "./approve-reject-form";
import { RefundDetails } from "./refund-details";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

/**
 * Approve, reject (a note is required) or approve a smaller amount — never more than is left to refund on the order
 * (its total minus earlier refunds): the form says how much is left, and the server refuses more anyway.
 */
export function RefundApprovalForm(props: DecisionFormProps<"refund_approval">) {
  const { payload, refusal } = props;
  const form = useDecisionForm(props, { rejectReason: "Say why the refund is rejected.", toCustomer: true });
  const { id, note } = form;
  const [amount, setAmount] = useState("");
  const { amountCents, currency } = payload.requested;
  const left = refundableCents(payload);
  const total = payload.order.total.amountCents;
  const canApproveAll = amountCents <= left;
  const most = Math.min(amountCents - 1, left);
  // A smaller amount acts like an approval: closed when nothing is left to refund or the policy refuses this person.
  const partialClosed = most <= 0 || Boolean(refusal);

  /** What is wrong with the smaller amount typed, or null. */
  const amountProblem = (cents: number | null): string | null => {
    if (cents === null || cents <= 0)
      return `Enter an amount such as ${(Math.max(most, 2) / 200).toFixed(2)}.`;
    if (cents >= amountCents)
      return `A smaller amount must be less than ${formatMoney(amountCents, currency)}.`;
    if (cents > left) return `Only ${formatMoney(left, currency)} of this order is left to refund.`;
    return null;
  };
  const approvePartial = () => {
    if (partialClosed) return;
    const cents = parseAmountToCents(amount);
    form.submit(
      { decision: "approve_partial", amountCents: cents ?? 0, ...note.withNote },
      { acts: true, problem: amountProblem(cents) },
    );
  };
  const amountError = form.error;

  return (
    <div className="space-y-5">
      <RefundDetails payload={payload} />
      {left < total && (
        <p
          data-testid="refundable"
          data-refundable-cents={left}
          className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950"
        >
          {formatMoney(left, currency)} of the order's {formatMoney(total, currency)} is left to refund (
          {formatMoney(total - left, currency)} refunded before).
          {!canApproveAll &&
            (left > 0
              ? " The request is more than that: approve a smaller amount, or reject it."
              : " Nothing more can be refunded: reject the request.")}
        </p>
      )}
      <ApproveRejectForm
        form={form}
        approveDisabled={!canApproveAll}
        approveLabel={
          canApproveAll
            ? `Approve ${formatMoney(amountCents, currency)}${left < total ? ` (${formatMoney(left, currency)} left to refund)` : ""}`
            : `Approve ${formatMoney(amountCents, currency)}: only ${formatMoney(left, currency)} left`
        }
        approve={{ decision: "approve", ...note.withNote }}
        reject={(text) => ({ decision: "reject", note: text, ...note.customerMessage })}
      />
      <form
        noValidate
        className="rounded-md border border-slate-200 bg-slate-50 p-3"
        onSubmit={form.onSubmit(approvePartial)}
      >
        <FieldLabel
          htmlFor={`${id}-amount`}
          hint={`(${currency}, at most ${formatMoney(Math.max(most, 0), currency)})`}
        >
          Or approve a smaller amount
        </FieldLabel>
        <div className="flex flex-wrap items-start gap-2">
          <input
            id={`${id}-amount`}
            data-testid="partial-amount"
            inputMode="decimal"
            autoComplete="off"
            placeholder={(Math.max(most, 2) / 200).toFixed(2)}
            value={amount}
            disabled={form.closed || partialClosed}
            aria-invalid={amountError ? true : undefined}
            aria-describedby={amountError ? `${id}-amount-error` : undefined}
            onChange={(e) => setAmount(e.target.value)}
            className={`${controlClass} max-w-40`}
          />
          <Button
            type="submit"
            variant="secondary"
            disabled={form.closed || partialClosed}
            aria-describedby={refusal ? form.refusalId : undefined}
            data-testid="approve-partial"
          >
            Approve smaller amount
          </Button>
        </div>
        {amountError && (
          <FieldMessage id={`${id}-amount-error`} error>
            {amountError}
          </FieldMessage>
        )}
      </form>
    </div>
  );
}
