"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { FieldMessage } from "@/components/ui/field";
import { SuggestedAnswer } from "./decision-note";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

/** One choice among a few, as a radio group (arrow keys move between options). */
export function SelectOptionForm(props: DecisionFormProps<"select_option">) {
  const { payload, taken, otherWay } = props;
  const form = useDecisionForm(props);
  const { id, error } = form;
  const [choice, setChoice] = useState(
    taken?.optionId ?? otherWay?.optionId ?? payload.defaultOptionId ?? "",
  );
  // A closed form shows the option that was taken, never the default nobody chose.
  const shown = taken?.optionId ?? choice;
  return (
    <form
      noValidate
      onSubmit={form.onSubmit(() =>
        form.submit({ optionId: choice }, { problem: choice ? null : "Choose one of the options." }),
      )}
      className="space-y-4"
    >
      {otherWay?.optionId && !taken && (
        <SuggestedAnswer>
          Answering differently: the option the other line did not take is selected.
        </SuggestedAnswer>
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
                disabled={form.closed}
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
      <Button type="submit" disabled={form.closed} data-testid="submit-option" data-shortcut="a">
        Confirm choice
      </Button>
    </form>
  );
}
