"use client";

import { useId, useState } from "react";
import { Button } from "@/components/ui/button";
import { controlClass, FieldLabel, FieldMessage, LengthCounter } from "@/components/ui/field";
import { suggestedRing } from "./decision-note";
import type { DecisionFormProps } from "./types";

/** The drafted reply, editable: send it as drafted, send the edited version, or don't send it. */
export function ConfirmEmailForm({
  payload,
  disabled,
  onAnswer,
  refusal,
  taken,
  otherWay,
}: DecisionFormProps<"confirm_email">) {
  const id = useId();
  const sentEdited = taken?.choice === "send_edited" ? taken : null;
  const [subject, setSubject] = useState(sentEdited?.subject ?? payload.subject);
  const [body, setBody] = useState(sentEdited?.body ?? payload.body);
  const edited = subject !== payload.subject || body !== payload.body;
  return (
    <form
      noValidate
      className="space-y-3"
      // Enter in the subject must not send an email: only the buttons below answer.
      onSubmit={(e) => e.preventDefault()}
    >
      <p className="text-sm text-slate-700">
        To <bdi className="font-medium text-slate-900">{payload.to}</bdi>
      </p>
      <div>
        <FieldLabel htmlFor={`${id}-subject`}>Subject</FieldLabel>
        <input
          id={`${id}-subject`}
          data-testid="email-subject"
          value={subject}
          disabled={disabled}
          maxLength={200}
          aria-describedby={`${id}-subject-count`}
          onChange={(e) => setSubject(e.target.value)}
          className={controlClass}
        />
        <LengthCounter id={`${id}-subject-count`} length={subject.length} limit={200} />
      </div>
      <div>
        <FieldLabel htmlFor={`${id}-body`}>Message</FieldLabel>
        <textarea
          id={`${id}-body`}
          data-testid="email-body"
          rows={9}
          value={body}
          disabled={disabled}
          maxLength={20_000}
          onChange={(e) => setBody(e.target.value)}
          aria-describedby={`${id}-state ${id}-body-count`}
          className={`${controlClass} font-mono text-[13px] leading-relaxed`}
        />
        <LengthCounter id={`${id}-body-count`} length={body.length} limit={20_000} />
        <FieldMessage id={`${id}-state`}>
          {edited ? "You edited the draft." : "This is the agent's draft; edit it before sending if needed."}
        </FieldMessage>
      </div>
      {refusal && (
        <p
          data-testid="decision-refusal"
          className="rounded-md border border-slate-300 bg-slate-100 p-3 text-sm text-slate-900"
        >
          {refusal} You can still choose not to send it.
        </p>
      )}
      {otherWay && !disabled && (
        <p
          data-testid="suggested-answer"
          className="rounded-md border border-sky-300 bg-sky-50 p-3 text-sm text-slate-900"
        >
          Answering differently: the other line{" "}
          {otherWay.verb === "reject" ? "sent the email" : "did not send it"}. The other way here is{" "}
          <strong>{otherWay.verb === "reject" ? "“Don’t send”" : "“Send as drafted”"}</strong>.
        </p>
      )}
      <div className="flex flex-wrap gap-2">
        <Button
          variant={edited ? "secondary" : "primary"}
          disabled={disabled || Boolean(refusal)}
          data-testid="send-as-is"
          data-shortcut="a"
          data-suggested={otherWay?.verb === "approve" ? "true" : undefined}
          className={otherWay?.verb === "approve" ? suggestedRing : undefined}
          onClick={() => onAnswer({ choice: "send" })}
        >
          {edited ? "Send the original draft" : "Send as drafted"}
        </Button>
        <Button
          disabled={disabled || !edited || Boolean(refusal)}
          data-testid="send-edited"
          onClick={() => onAnswer({ choice: "send_edited", subject, body })}
        >
          Send edited version
        </Button>
        <Button
          variant="secondary"
          disabled={disabled}
          data-testid="dont-send"
          data-shortcut="r"
          data-suggested={otherWay?.verb === "reject" ? "true" : undefined}
          className={otherWay?.verb === "reject" ? suggestedRing : undefined}
          onClick={() => onAnswer({ choice: "dont_send" })}
        >
          Don&apos;t send
        </Button>
      </div>
    </form>
  );
}
