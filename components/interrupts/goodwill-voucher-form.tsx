"use client";

import { Button } from "@/components/ui/button";
import { formatMoney } from "@/lib/wire";
import { useDecisionNote } from "./decision-note";
import type { DecisionFormProps } from "./types";

/** Grant the proposed goodwill voucher, or decline it with a reason. */
export function GoodwillVoucherForm({ payload, disabled, onAnswer }: DecisionFormProps<"goodwill_voucher">) {
  const note = useDecisionNote({ disabled, rejectReason: "Say why the voucher is declined." });
  return (
    <div className="space-y-4">
      <p className="text-sm text-slate-800">
        <bdi>{payload.customer.name}</bdi> wrote: “<bdi>{payload.complaint}</bdi>”
      </p>
      {note.field}
      <div className="flex flex-wrap gap-2">
        <Button disabled={disabled} data-testid="grant" onClick={() => onAnswer({ decision: "grant" })}>
          Grant {formatMoney(payload.voucher.amountCents, payload.voucher.currency)}
        </Button>
        <Button
          variant="danger"
          disabled={disabled}
          data-testid="decline"
          onClick={() => {
            const reason = note.requireForReject();
            if (reason) onAnswer({ decision: "decline", note: reason });
          }}
        >
          Decline
        </Button>
      </div>
    </div>
  );
}
