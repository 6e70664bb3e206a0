"use client";

import { formatMoney } from "@/lib/contract/wire";
import { ApproveRejectForm } from "./approve-reject-form";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

/** Grant the proposed goodwill voucher, or decline it with a reason. */
export function GoodwillVoucherForm(props: DecisionFormProps<"goodwill_voucher">) {
  const form = useDecisionForm(props, { rejectReason: "Say why the voucher is declined." });
  const { customer, complaint, voucher } = props.payload;
  return (
    <div className="space-y-4">
      <p className="text-sm text-slate-800">
        <bdi>{customer.name}</bdi> wrote: “<bdi>{complaint}</bdi>”
      </p>
      <ApproveRejectForm
        form={form}
        approveLabel={`Grant ${formatMoney(voucher.amountCents, voucher.currency)}`}
        rejectLabel="Decline"
        approveTestId="grant"
        rejectTestId="decline"
        approve={{ decision: "grant" }}
        reject={(text) => ({ decision: "decline", note: text })}
      />
    </div>
  );
}
