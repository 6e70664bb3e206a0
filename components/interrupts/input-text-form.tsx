"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { controlClass, FieldLabel, FieldMessage } from "@/components/ui/field";
import { validateAnswer } from "@/lib/contract/questions";
import { readableError } from "./readable-error";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

/**
 * A labelled text answer. Length and pattern are on the input for assistive technology and autofill, but checked by
 * the contract (`validateAnswer`), so the message the operator sees is the payload's hint, not the browser's.
 */
export function InputTextForm(props: DecisionFormProps<"input_text">) {
  const { payload, taken } = props;
  const form = useDecisionForm(props);
  const { id, error } = form;
  const [text, setText] = useState(taken?.text ?? "");
  const hint = payload.patternHint ?? `${payload.minLength}–${payload.maxLength} characters`;
  // The error takes the hint's place (a pattern failure's message is the hint itself).
  const describedBy = error ? `${id}-error` : `${id}-hint`;
  return (
    <form
      noValidate
      className="space-y-3"
      onSubmit={form.onSubmit(() => {
        const check = validateAnswer(payload, { text });
        form.submit({ text: text.trim() }, { problem: check.ok ? null : readableError(check.error) });
      })}
    >
      {payload.context && (
        <blockquote className="border-l-4 border-slate-300 pl-3 text-sm text-slate-700">
          {payload.context}
        </blockquote>
      )}
      <div>
        <FieldLabel htmlFor={`${id}-text`}>{payload.question}</FieldLabel>
        <input
          id={`${id}-text`}
          data-testid="text-answer"
          value={text}
          disabled={form.closed}
          placeholder={payload.placeholder}
          minLength={payload.minLength}
          maxLength={payload.maxLength}
          pattern={payload.pattern}
          autoComplete="off"
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
          onChange={(e) => setText(e.target.value)}
          className={controlClass}
        />
        {error ? (
          <FieldMessage id={`${id}-error`} error>
            {error}
          </FieldMessage>
        ) : (
          <FieldMessage id={`${id}-hint`}>{hint}</FieldMessage>
        )}
      </div>
      <Button type="submit" disabled={form.closed} data-testid="submit-text" data-shortcut="a">
        Send answer
      </Button>
    </form>
  );
}
