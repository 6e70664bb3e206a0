"use client";

import { useId, useState } from "react";
import { Button } from "@/components/ui/button";
import { FieldMessage } from "@/components/ui/field";
import type { DecisionFormProps } from "./types";

/** One choice among a few, as a radio group (arrow keys move between options). */
export function SelectOptionForm({
  payload,
  disabled,
  onAnswer,
  taken,
  otherWay,
}: DecisionFormProps<"select_option">) {
  const id = useId();
  const [choice, setChoice] = useState(
    taken?.optionId ?? otherWay?.optionId ?? payload.defaultOptionId ?? "",
  );
  // A closed form shows the option that was taken, never the default nobody chose.
  const shown = taken?.optionId ?? choice;
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!choice) {
          setError("Choose one of the options.");
          return;
        }
        setError(null);
        onAnswer({ optionId: choice });
      }}
      className="space-y-4"
    >
      {otherWay?.optionId && !taken && (
        <p
          data-testid="suggested-answer"
          className="rounded-md border border-sky-300 bg-sky-50 p-3 text-sm text-slate-900"
        >
          Answering differently: the option the other line did not take is selected.
        </p>
      )}
      <fieldset aria-describedby={error ? `${id}-error` : undefined}>
        <legend className="mb-2 text-sm font-medium text-slate-900">{payload.question}</legend>
        <div className="space-y-2">
          {payload.options.map((option) => (
            <label
              key={option.id}
              htmlFor={`${id}-${option.id}`}
              className="flex cursor-pointer items-start gap-3 rounded-md border border-slate-300 bg-white p-3 has-[:checked]:border-indigo-700 has-[:checked]:bg-indigo-50"
            >
              <input
                type="radio"
                id={`${id}-${option.id}`}
                name={`${id}-option`}
                value={option.id}
                data-testid={`option-${option.id}`}
                checked={shown === option.id}
                disabled={disabled}
                onChange={() => setChoice(option.id)}
                className="mt-1 size-4 accent-indigo-700"
              />
              <span>
                <span className="block text-sm font-medium text-slate-900">{option.label}</span>
                {option.description && (
                  <span className="block text-sm text-slate-700">{option.description}</span>
                )}
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      {error && (
        <FieldMessage id={`${id}-error`} error>
          {error}
        </FieldMessage>
      )}
      <Button type="submit" disabled={disabled} data-testid="submit-option" data-shortcut="a">
        Confirm choice
      </Button>
    </form>
  );
}
