"use client";

import { useId, useState } from "react";
import { Button } from "@/components/ui/button";
import { controlClass, FieldLabel, FieldMessage } from "@/components/ui/field";
import { refundableCents } from "@/lib/contract/questions";
import { formatMoney } from "@/lib/contract/wire";
import { parseAmountToCents } from "./amount";
import { ApproveRejectForm, submitTo, useDecisionNote } from "./decision-note";
import { RefundDetails } from "./refund-details";
import type { DecisionFormProps } from "./types";

/**
 * Approve, reject (a note is required) or approve a smaller amount — never more than is left to refund on the order
 * (its total minus earlier refunds): the form says how much is left, and the server refuses more anyway.
 */
export function RefundApprovalForm({
  interruptId,
  payload,
  disabled,
  onAnswer,
  refusal,
  otherWay,
}: DecisionFormProps<"refund_approval">) {
  const id = useId();
  const note = useDecisionNote({
    draftKey: interruptId,
    disabled,
    rejectReason: "Say why the refund is rejected.",
    toCustomer: true,
  });
  const [amount, setAmount] = useState("");
  const [amountError, setAmountError] = useState<string | null>(null);
  const { amountCents, currency } = payload.requested;
  const left = refundableCents(payload);
  const total = payload.order.total.amountCents;
  const canApproveAll = amountCents <= left;
  const most = Math.min(amountCents - 1, left);
  // A smaller amount acts like an approval: closed when nothing is left to refund or the policy refuses this person.
  const partialClosed = most <= 0 || Boolean(refusal);

  const approvePartial = () => {
    if (partialClosed) return;
    const cents = parseAmountToCents(amount);
    if (cents === null || cents <= 0) {
      setAmountError(`Enter an amount such as ${(Math.max(most, 2) / 200).toFixed(2)}.`);
      return;
    }
    if (cents >= amountCents) {
      setAmountError(`A smaller amount must be less than ${formatMoney(amountCents, currency)}.`);
      return;
    }
    if (cents > left) {
      setAmountError(`Only ${formatMoney(left, currency)} of this order is left to refund.`);
      return;
    }
    setAmountError(null);
    onAnswer({ decision: "approve_partial", amountCents: cents, ...note.withNote });
  };

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
        note={note}
        disabled={disabled}
        refusal={refusal}
        suggest={otherWay?.verb}
        approveDisabled={!canApproveAll}
        approveLabel={
          canApproveAll
            ? `Approve ${formatMoney(amountCents, currency)}${left < total ? ` (${formatMoney(left, currency)} left to refund)` : ""}`
            : `Approve ${formatMoney(amountCents, currency)}: only ${formatMoney(left, currency)} left`
        }
        onApprove={() => onAnswer({ decision: "approve", ...note.withNote })}
        onReject={(text) => onAnswer({ decision: "reject", note: text, ...note.customerMessage })}
      />
      <form
        noValidate
        className="rounded-md border border-slate-200 bg-slate-50 p-3"
        onSubmit={submitTo(approvePartial)}
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
            disabled={disabled || partialClosed}
            aria-invalid={amountError ? true : undefined}
            aria-describedby={amountError ? `${id}-amount-error` : undefined}
            onChange={(e) => setAmount(e.target.value)}
            className={`${controlClass} max-w-40`}
          />
          <Button
            type="submit"
            variant="secondary"
            disabled={disabled || partialClosed}
            aria-describedby={refusal ? "decision-refusal" : undefined}
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
