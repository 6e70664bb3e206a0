"use client";

import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import type { AnswerOf, InterruptAction } from "@/lib/contract/questions";
import type { OtherWay } from "@/lib/contract/questions/kinds";
import { type DecisionNote, useDecisionNote } from "./decision-note";
import {
  answeredStep,
  openShell,
  releasedStep,
  type ShellState,
  shellView,
  submitStep,
} from "./decision-shell";
import type { DecisionFormProps } from "./types";

/** What `useDecisionForm` gives a form of action `A`, and the shared pieces (`ApproveRejectForm`) take. */
export interface DecisionFormShell<A extends InterruptAction> {
  /** The question's action (what the shared pieces type their answers by). */
  action: A;
  /** A base for the form's field ids. */
  id: string;
  /** Every control is closed: the page's `disabled`, or the answer was handed to the card. */
  closed: boolean;
  /** The answer that acts is closed too: closed, or refused to this operator. */
  actClosed: boolean;
  /** Why this operator may not give the answer that acts, or null. */
  refusal: string | null;
  /** The DOM id of this form's refusal note (controls it closes point to it). */
  refusalId: string;
  /** What is wrong with the fields at the last submission, or null. */
  error: string | null;
  /** "Answer differently": the answer the other line did not give, to mark. */
  suggest: OtherWay["verb"] | undefined;
  note: DecisionNote;
  /**
   * Hand an answer to the card, once. `acts`: the answer acts on the world, so a refusal keeps it here; `problem`:
   * what is wrong with the fields (shown as `error`), null when nothing is. True when the card took it.
   */
  submit: (answer: AnswerOf[A], options?: { acts?: boolean; problem?: string | null }) => boolean;
  /** A `<form>`'s submit handler that stays on the page and calls `act`. */
  onSubmit: (act: () => void) => (event: FormEvent) => void;
}

/**
 * The shell every decision form shares: the note (with its draft kept across a refresh and its reason required to
 * reject), whether the controls are closed, the refusal, the field error, and the one way an answer leaves the form
 * (`submit`, by the rules of `decision-shell.ts`). A form declares only its fields and the answer they make.
 */
export function useDecisionForm<A extends InterruptAction>(
  { interruptId, payload, disabled, refusal = null, otherWay = null, onAnswer }: DecisionFormProps<A>,
  {
    rejectReason = "Say why.",
    toCustomer = false,
  }: {
    /** Said at the note when it is empty and the operator rejects. */
    rejectReason?: string;
    /** The note comes with a message to the customer (the refund's reply email). */
    toCustomer?: boolean;
  } = {},
): DecisionFormShell<A> {
  const id = useId();
  const [shell, setShell] = useState<ShellState>(openShell);
  // The state as of the last submission, before React renders it: a second click in the same tick sends nothing.
  const current = useRef<ShellState>(openShell);
  const move = (next: ShellState) => {
    current.current = next;
    setShell(next);
  };

  // The page closed or opened the form (sending, refused and given back, answered elsewhere): it owns it again.
  const seen = useRef(disabled);
  useEffect(() => {
    if (seen.current === disabled) return;
    seen.current = disabled;
    const next = releasedStep(current.current);
    current.current = next;
    setShell(next);
  }, [disabled]);

  const view = shellView(shell, { disabled, refusal });
  const note = useDecisionNote({ draftKey: interruptId, disabled: view.closed, rejectReason, toCustomer });

  const submit: DecisionFormShell<A>["submit"] = (answer, { acts = false, problem = null } = {}) => {
    const step = submitStep(current.current, { disabled, refusal, acts, problem });
    if (!step.send) {
      if (step.state !== current.current) move(step.state);
      return false;
    }
    const taken = onAnswer(answer);
    move(answeredStep(step.state, taken));
    return taken;
  };

  return {
    action: payload.action,
    id,
    refusalId: `${id}-refusal`,
    ...view,
    suggest: otherWay?.verb,
    note,
    submit,
    onSubmit: (act) => (event) => {
      event.preventDefault();
      act();
    },
  };
}
