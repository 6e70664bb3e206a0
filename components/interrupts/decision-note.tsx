"use client";

import { useId, useRef, useState } from "react";
import { controlClass, FieldLabel, FieldMessage } from "@/components/ui/field";

/**
 * The note of an approve/reject decision: optional to approve, required to reject (`requireForReject` focuses it and
 * says why when it is empty). Returns the field to render and the trimmed note.
 */
export function useDecisionNote({ disabled, rejectReason }: { disabled: boolean; rejectReason: string }) {
  const id = useId();
  const ref = useRef<HTMLTextAreaElement>(null);
  const [note, setNote] = useState("");
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
      <FieldLabel htmlFor={`${id}-note`} hint="(required to reject, kept with any decision)">
        Note
      </FieldLabel>
      <textarea
        ref={ref}
        id={`${id}-note`}
        data-testid="decision-note"
        rows={2}
        value={note}
        disabled={disabled}
        maxLength={2000}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-note-error` : undefined}
        onChange={(e) => setNote(e.target.value)}
        className={controlClass}
      />
      {error && (
        <FieldMessage id={`${id}-note-error`} error>
          {error}
        </FieldMessage>
      )}
    </div>
  );
  return { field, withNote: trimmed ? { note: trimmed } : {}, requireForReject };
}
