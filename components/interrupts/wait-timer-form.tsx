"use client";

import { formatDuration } from "@/lib/contract/format";
import { ApproveRejectForm, useDecisionNote } from "./decision-note";
import type { DecisionFormProps } from "./types";

/**
 * A timer the graph waits on: it fires by itself when its time is up (the deadline shows when). A person may fire it
 * now or cancel the wait with a reason, as the agent's policy allows.
 */
export function WaitTimerForm({
  interruptId,
  payload,
  disabled,
  onAnswer,
  refusal,
  otherWay,
}: DecisionFormProps<"wait_timer">) {
  const note = useDecisionNote({
    draftKey: interruptId,
    disabled,
    rejectReason: "Say why the wait is cancelled.",
  });
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
        note={note}
        disabled={disabled}
        refusal={refusal}
        suggest={otherWay?.verb}
        approveLabel="Fire now"
        rejectLabel="Cancel the wait"
        approveTestId="timer-fire"
        rejectTestId="timer-cancel"
        onApprove={() => onAnswer({ outcome: "fired", ...note.withNote })}
        onReject={(reason) => onAnswer({ outcome: "cancelled", note: reason })}
      />
    </div>
  );
}
