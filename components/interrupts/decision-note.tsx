"use client";

import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { controlClass, FieldLabel, FieldMessage, LengthCounter } from "@/components/ui/field";

export const NOTE_LIMIT = 2000;

/** A half-typed note survives a refresh of the tab: kept in sessionStorage under the decision it belongs to. */
function useDraft(key: string | undefined): [string, (value: string) => void] {
  const [value, setValue] = useState("");
  useEffect(() => {
    if (!key) return;
    const saved = window.sessionStorage.getItem(key);
    if (saved) setValue(saved);
  }, [key]);
  const set = (next: string) => {
    setValue(next);
    if (!key) return;
    if (next) window.sessionStorage.setItem(key, next);
    else window.sessionStorage.removeItem(key);
  };
  return [value, set];
}

/**
 * The note of an approve/reject decision: optional to approve, required to reject (`requireForReject` focuses it and
 * says why when it is empty). Returns the field to render and the trimmed note.
 */
export function useDecisionNote({
  disabled,
  rejectReason,
  toCustomer = false,
  draftKey,
}: {
  /** Keep what is typed across a refresh, under this key (the interrupt id). */
  draftKey?: string;
  disabled: boolean;
  rejectReason: string;
  /** Also offer a separate message to the customer (it goes into the reply email; the note never does). */
  toCustomer?: boolean;
}) {
  const id = useId();
  const ref = useRef<HTMLTextAreaElement>(null);
  const [note, setNote] = useDraft(draftKey && `decision-note:${draftKey}`);
  const [message, setMessage] = useDraft(draftKey && `decision-message:${draftKey}`);
  const [error, setError] = useState<string | null>(null);
  const trimmed = note.trim();

  const requireForReject = (): string | null => {
    if (!trimmed) {
      setError(rejectReason);
      ref.current?.focus();
      return null;
    }
    setError(null);
    return trimmed;
  };

  const field = (
    <div>
      <FieldLabel
        htmlFor={`${id}-note`}
        hint="(required to reject; kept with the decision for your team, never sent to the customer)"
      >
        Internal note
      </FieldLabel>
      <textarea
        ref={ref}
        id={`${id}-note`}
        data-testid="decision-note"
        rows={2}
        value={note}
        disabled={disabled}
        maxLength={NOTE_LIMIT}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-note-error ${id}-note-count` : `${id}-note-count`}
        onChange={(e) => setNote(e.target.value)}
        className={controlClass}
      />
      <LengthCounter id={`${id}-note-count`} length={note.length} limit={NOTE_LIMIT} />
      {error && (
        <FieldMessage id={`${id}-note-error`} error>
          {error}
        </FieldMessage>
      )}
    </div>
  );
  const customerField = toCustomer ? (
    <div>
      <FieldLabel htmlFor={`${id}-customer`} hint="(optional; goes into the reply email as written)">
        Message to the customer
      </FieldLabel>
      <textarea
        id={`${id}-customer`}
        data-testid="customer-message"
        rows={2}
        value={message}
        disabled={disabled}
        maxLength={CUSTOMER_MESSAGE_LIMIT}
        aria-describedby={`${id}-customer-count`}
        onChange={(e) => setMessage(e.target.value)}
        className={controlClass}
      />
      <LengthCounter id={`${id}-customer-count`} length={message.length} limit={CUSTOMER_MESSAGE_LIMIT} />
    </div>
  ) : null;
  const toSend = message.trim();
  return {
    field: (
      <>
        {field}
        {customerField}
      </>
    ),
    withNote: { ...(trimmed ? { note: trimmed } : {}), ...(toSend ? { customerMessage: toSend } : {}) },
    customerMessage: toSend ? { customerMessage: toSend } : {},
    requireForReject,
  };
}

export const CUSTOMER_MESSAGE_LIMIT = 1000;

/** The note of a decision form: its field, the note and customer message to send, the rule to reject. */
export type DecisionNote = ReturnType<typeof useDecisionNote>;

/** How the other way to answer is marked (“answer differently”). */
export const suggestedRing = "ring-2 ring-sky-600 ring-offset-2";

/** Why the acting answer is not this operator's to give, said before the click, and what is still open to them. */
export function RefusalNote({
  id,
  reason,
  then = "You can still reject it with a note.",
}: {
  /** The form's `refusalId` (unique per card: several cards may show a refusal at once). */
  id: string;
  reason: string;
  then?: string | null;
}) {
  return (
    <p
      id={id}
      data-testid="decision-refusal"
      className="rounded-md border border-slate-300 bg-slate-100 p-3 text-sm text-slate-900"
    >
      {reason}
      {then ? ` ${then}` : null}
    </p>
  );
}

/** "Answer differently": what the other line answered and the other way here, said above the controls. */
export function SuggestedAnswer({ id, children }: { id?: string; children: ReactNode }) {
  return (
    <p
      id={id}
      data-testid="suggested-answer"
      className="rounded-md border border-sky-300 bg-sky-50 p-3 text-sm text-slate-900"
    >
      {children}
    </p>
  );
}
