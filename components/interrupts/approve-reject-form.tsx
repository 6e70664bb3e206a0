"use client";

import { useId } from "react";
import { Button } from "@/components/ui/button";
import type { AnswerOf, InterruptAction } from "@/lib/contract/questions";
import { RefusalNote, SuggestedAnswer, suggestedRing } from "./decision-note";
import type { DecisionFormShell } from "./use-decision-form";

/**
 * The approve / reject form every approval shares: the shell's note field, an approve button (submit; the answer
 * that acts) and a reject button that insists on a note. A form gives only the labels and the two answers.
 */
export function ApproveRejectForm<A extends InterruptAction>({
  form,
  approveLabel,
  rejectLabel = "Reject",
  approveTestId = "approve",
  rejectTestId = "reject",
  approveDisabled = false,
  approve,
  reject,
}: {
  form: DecisionFormShell<A>;
  approveLabel: string;
  /** Approving is not possible (e.g. more than is left to refund): the button stays, disabled. */
  approveDisabled?: boolean;
  rejectLabel?: string;
  approveTestId?: string;
  rejectTestId?: string;
  /** The answer that approves. */
  approve: AnswerOf[A];
  /** The answer that rejects, with the note saying why. */
  reject: (note: string) => AnswerOf[A];
}) {
  const suggestedId = useId();
  const { closed, refusal, refusalId, suggest, note } = form;
  return (
    <form
      noValidate
      className="space-y-3 border-t border-slate-200 pt-4"
      onSubmit={form.onSubmit(() => {
        if (!approveDisabled) form.submit(approve, { acts: true });
      })}
    >
      {note.field}
      {refusal && <RefusalNote id={refusalId} reason={refusal} />}
      {suggest && !closed && (
        <SuggestedAnswer id={suggestedId}>
          Answering differently: the other line chose “{suggest === "reject" ? approveLabel : rejectLabel}”.
          The other way here is <strong>“{suggest === "reject" ? rejectLabel : approveLabel}”</strong>
          {suggest === "reject" ? ", with a note saying why." : "."}
        </SuggestedAnswer>
      )}
      <div className="flex flex-wrap gap-2">
        <Button
          type="submit"
          disabled={form.actClosed || approveDisabled}
          data-testid={approveTestId}
          data-shortcut="a"
          data-suggested={suggest === "approve" ? "true" : undefined}
          className={suggest === "approve" ? suggestedRing : undefined}
          aria-describedby={
            [refusal ? refusalId : "", suggest === "approve" ? suggestedId : ""].filter(Boolean).join(" ") ||
            undefined
          }
        >
          {approveLabel}
        </Button>
        <Button
          variant="danger"
          disabled={closed}
          data-testid={rejectTestId}
          data-shortcut="r"
          data-suggested={suggest === "reject" ? "true" : undefined}
          className={suggest === "reject" ? suggestedRing : undefined}
          aria-describedby={suggest === "reject" ? suggestedId : undefined}
          onClick={() => {
            const text = note.requireForReject();
            if (text) form.submit(reject(text));
          }}
        >
          {rejectLabel}
        </Button>
      </div>
    </form>
  );
}
