"use client";

import { formatDuration } from "@/lib/contract/format";
import { ApproveRejectForm } from "./approve-reject-form";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

/**
 * A timer the graph waits on: it fires by itself when its time is up (the deadline shows when). A person may fire it
 * now or cancel the wait with a reason, as the agent's policy allows.
 */
export function WaitTimerForm(props: DecisionFormProps<"wait_timer">) {
  const form = useDecisionForm(props, { rejectReason: "Say why the wait is cancelled." });
  const { payload } = props;
  return (
    <div className="space-y-4">
      <p className="text-sm text-slate-800" data-testid="timer-reason">
        {payload.reason}
      </p>
      <p className="text-sm text-slate-700" data-testid="timer-duration">
        Waits {formatDuration(payload.durationMs)} from when it was asked, then fires by itself: nobody needs
        to answer.
        {payload.onCancel ? ` Cancelling: ${payload.onCancel}` : ""}
      </p>
      <ApproveRejectForm
        form={form}
        approveLabel="Fire now"
        rejectLabel="Cancel the wait"
        approveTestId="timer-fire"
        rejectTestId="timer-cancel"
        approve={{ outcome: "fired", ...form.note.withNote }}
        reject={(reason) => ({ outcome: "cancelled", note: reason })}
      />
    </div>
  );
}
