"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { controlClass, FieldLabel, FieldMessage, LengthCounter } from "@/components/ui/field";
import { RefusalNote, SuggestedAnswer, suggestedRing } from "./decision-note";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

/** The drafted reply, editable: send it as drafted, send the edited version, or don't send it. */
export function ConfirmEmailForm(props: DecisionFormProps<"confirm_email">) {
  const { payload, taken, otherWay } = props;
  const form = useDecisionForm(props);
  const { id, refusal } = form;
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
          disabled={form.closed}
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
          disabled={form.closed}
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
        <RefusalNote id={form.refusalId} reason={refusal} then="You can still choose not to send it." />
      )}
      {otherWay && !form.closed && (
        <SuggestedAnswer>
          Answering differently: the other line{" "}
          {otherWay.verb === "reject" ? "sent the email" : "did not send it"}. The other way here is{" "}
          <strong>{otherWay.verb === "reject" ? "“Don’t send”" : "“Send as drafted”"}</strong>.
        </SuggestedAnswer>
      )}
      <div className="flex flex-wrap gap-2">
        <Button
          variant={edited ? "secondary" : "primary"}
          disabled={form.actClosed}
          data-testid="send-as-is"
          data-shortcut="a"
          data-suggested={otherWay?.verb === "approve" ? "true" : undefined}
          className={otherWay?.verb === "approve" ? suggestedRing : undefined}
          onClick={() => form.submit({ choice: "send" }, { acts: true })}
        >
          {edited ? "Send the original draft" : "Send as drafted"}
        </Button>
        <Button
          disabled={form.actClosed || !edited}
          data-testid="send-edited"
          onClick={() => form.submit({ choice: "send_edited", subject, body }, { acts: true })}
        >
          Send edited version
        </Button>
        <Button
          variant="secondary"
          disabled={form.closed}
          data-testid="dont-send"
          data-shortcut="r"
          data-suggested={otherWay?.verb === "reject" ? "true" : undefined}
          className={otherWay?.verb === "reject" ? suggestedRing : undefined}
          onClick={() => form.submit({ choice: "dont_send" })}
        >
          Don&apos;t send
        </Button>
      </div>
    </form>
  );
}
