"use client";

import { useId, useState } from "react";
import { Button } from "@/components/ui/button";
import { controlClass, FieldLabel, FieldMessage } from "@/components/ui/field";
import { JsonTree } from "@/components/ui/json-tree";

/**
 * Any interrupt the console cannot read: an action it has no form for, or a payload outside the contract. The raw
 * value is shown as text only (JsonTree renders text nodes; nothing from the payload becomes HTML), and the operator
 * can still answer it with JSON, which the server passes to the graph to validate.
 */
export function FallbackView({
  action,
  raw,
  reason,
  disabled,
  onAnswer,
}: {
  action: string;
  raw: unknown;
  reason?: string;
  disabled: boolean;
  onAnswer: (answer: unknown) => void;
}) {
  const id = useId();
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  // The server files anything outside the contract under "unknown"; the raw value may still say what it wanted.
  const rawAction =
    raw && typeof raw === "object" && "action" in raw && typeof raw.action === "string" ? raw.action : null;
  const named = rawAction ?? (action !== "unknown" ? action : null);
  return (
    <div className="space-y-4" data-testid="fallback-view">
      <p className="text-sm text-slate-800">
        This console has no form for this request
        {named ? (
          <>
            {" "}
            (action <code className="rounded bg-slate-100 px-1">{named}</code>)
          </>
        ) : null}
        . Its content is shown as it arrived.
      </p>
      {reason && (
        <details className="text-sm">
          <summary className="cursor-pointer text-slate-700">
            Why it could not be read (technical details for support)
          </summary>
          {/* The validator's own words about a payload outside the contract: data for support, like the raw value. */}
          <pre
            data-raw
            className="mt-1 whitespace-pre-wrap break-words rounded bg-slate-100 p-2 text-xs text-slate-800"
          >
            {reason}
          </pre>
        </details>
      )}
      <div
        className="max-h-72 overflow-auto rounded-md border border-slate-200 bg-slate-50 p-2"
        data-testid="fallback-raw"
      >
        <JsonTree value={raw} label="payload" />
      </div>
      <form
        noValidate
        className="space-y-2"
        onSubmit={(e) => {
          e.preventDefault();
          try {
            const answer: unknown = JSON.parse(text);
            setError(null);
            onAnswer(answer);
          } catch {
            setError('The answer must be JSON, for example {"approved": true}.');
          }
        }}
      >
        <FieldLabel htmlFor={`${id}-answer`} hint="(JSON)">
          Answer
        </FieldLabel>
        <textarea
          id={`${id}-answer`}
          data-testid="fallback-answer"
          rows={3}
          value={text}
          disabled={disabled}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
          onChange={(e) => setText(e.target.value)}
          className={`${controlClass} font-mono`}
        />
        {error && (
          <FieldMessage id={`${id}-error`} error>
            {error}
          </FieldMessage>
        )}
        <Button type="submit" variant="secondary" disabled={disabled} data-testid="submit-fallback">
          Send answer
        </Button>
      </form>
    </div>
  );
}
