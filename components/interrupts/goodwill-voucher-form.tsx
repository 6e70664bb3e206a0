"use client";

import { formatMoney } from "@/lib/contract/wire";
import { ApproveRejectForm, useDecisionNote } from "./decision-note";
import type { DecisionFormProps } from "./types";

/** Grant the proposed goodwill voucher, or decline it with a reason. */
export function GoodwillVoucherForm({
  interruptId,
  payload,
  disabled,
  onAnswer,
  refusal,
  otherWay,
}: DecisionFormProps<"goodwill_voucher">) {
  const note = useDecisionNote({
    draftKey: interruptId,
    disabled,
    rejectReason: "Say why the voucher is declined.",
  });
  return (
    <div className="space-y-4">
      <p className="text-sm text-slate-800">
        <bdi>{payload.customer.name}</bdi> wrote: “<bdi>{payload.complaint}</bdi>”
      </p>
      <ApproveRejectForm
        note={note}
        disabled={disabled}
        refusal={refusal}
        suggest={otherWay?.verb}
        approveLabel={`Grant ${formatMoney(payload.voucher.amountCents, payload.voucher.currency)}`}
        rejectLabel="Decline"
        approveTestId="grant"
        rejectTestId="decline"
        onApprove={() => onAnswer({ decision: "grant" })}
        onReject={(text) => onAnswer({ decision: "decline", note: text })}
      />
    </div>
  );
}
