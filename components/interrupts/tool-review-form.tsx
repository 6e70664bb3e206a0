"use client";

import { useState } from "react";
import { AgentMarkdown } from "@/components/ui/agent-markdown";
import { Button } from "@/components/ui/button";
import { controlClass, FieldLabel } from "@/components/ui/field";
import { humanize } from "@/lib/contract/humanize";
import type { AnswerOf } from "@/lib/contract/questions";
import {
  encodeDecisions,
  fieldWords,
  isMoneyArg,
  type ReviewDecision,
  type ReviewDecisionType,
  type ReviewedToolCall,
  reviewDecisions,
  sentBackToModel,
} from "@/lib/contract/questions/tool-review";
import { RefusalNote, SuggestedAnswer } from "./decision-note";
import { readJsonArgs } from "./json-args";
import type { DecisionFormProps } from "./types";
import { useDecisionForm } from "./use-decision-form";

/*
 * The standard interrupts (LangChain's review middleware, agent-inbox), rendered without code of the agent's: one card
 * per reviewed tool call with its name, description and arguments, the decisions its config allows, an edit form
 * generated from the tool's argument schema, and a reason box for reject / respond. The answer is given in the
 * format the agent's library resumes from (`encodeDecisions`); the card checks it against the contract before it
 * leaves the page, and the server checks it again.
 */

const VERBS: Record<ReviewDecisionType, string> = {
  approve: "Approve",
  edit: "Edit, then approve",
  reject: "Reject",
  respond: "Answer the agent instead",
  ignore: "Ignore (the call is not made)",
};

interface Draft {
  /** Null: nothing chosen yet (a call that moves money opens with no answer preselected). */
  type: ReviewDecisionType | null;
  /** Edited argument values as typed (strings, or booleans for checkboxes). */
  fields: Record<string, string | boolean>;
  /** Arguments as JSON text, when the tool declares no schema to build a form from. */
  json: string;
  message: string;
}

type Property = {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  description?: string;
  maxLength?: number;
};

function propertiesOf(request: ReviewedToolCall): [string, Property][] | null {
  const props = request.argsSchema?.properties;
  if (!props || typeof props !== "object") return null;
  return Object.entries(props as Record<string, Property>);
}

/** A numeric argument in minor units (`amountCents`): shown and typed as money (2.50), sent in cents (250). */
const moneyField = (name: string, prop: Property) =>
  isMoneyArg(name) && (prop.type === "integer" || prop.type === "number");
const asMoney = (cents: number) => (cents / 100).toFixed(2);

/** Whether a call moves money (one of its arguments is an amount): nothing is preselected for it. */
function movesMoney(request: ReviewedToolCall): boolean {
  return (
    (propertiesOf(request) ?? []).some(([name, prop]) => moneyField(name, prop)) ||
    Object.keys(request.args).some(isMoneyArg)
  );
}

function initialDraft(request: ReviewedToolCall, taken: ReviewDecision | undefined): Draft {
  const args = taken?.type === "edit" ? taken.args : request.args;
  const fields: Record<string, string | boolean> = {};
  for (const [name, prop] of propertiesOf(request) ?? []) {
    const value = args[name];
    fields[name] =
      prop.type === "boolean"
        ? value === true
        : value === undefined || value === null
          ? ""
          : moneyField(name, prop) && typeof value === "number"
            ? asMoney(value)
            : String(value);
  }
  return {
    type:
      taken?.type ??
      (movesMoney(request)
        ? null
        : request.allowed.includes("approve")
          ? "approve"
          : (request.allowed[0] as ReviewDecisionType)),
    fields,
    json: JSON.stringify(args, null, 2),
    message:
      taken && "message" in taken
        ? (taken.message ?? "")
        : taken?.type === "ignore"
          ? (taken.note ?? "")
          : "",
  };
}

/** The edited arguments from the form: numbers as numbers, empty optional fields left out. */
function editedArgs(request: ReviewedToolCall, draft: Draft): Record<string, unknown> {
  const props = propertiesOf(request);
  if (!props) {
    const read = readJsonArgs(draft.json);
    return read.ok ? read.args : { __invalid_json__: draft.json };
  }
  const args: Record<string, unknown> = { ...request.args };
  for (const [name, prop] of props) {
    const value = draft.fields[name];
    if (prop.type === "boolean") args[name] = value === true;
    else if (value === "" || value === undefined) delete args[name];
    else if (moneyField(name, prop)) {
      // Typed as money: to minor units (a value that is no amount goes as typed, and the server says why).
      const amount = Number(String(value).replace(",", "."));
      args[name] = Number.isFinite(amount) ? Math.round(amount * 100) : value;
    } else if (prop.type === "integer" || prop.type === "number") args[name] = Number(value);
    else args[name] = value;
  }
  return args;
}

/** One call's decision as the form has it (a call not decided yet reads as approved: only `submit` sends, once all are). */
function decisionOf(request: ReviewedToolCall, d: Draft): ReviewDecision {
  if (d.type === "edit") return { type: "edit", args: editedArgs(request, d) };
  if (d.type === "respond") return { type: "respond", message: d.message.trim() };
  if (d.type === "reject")
    return d.message.trim() ? { type: "reject", message: d.message.trim() } : { type: "reject" };
  if (d.type === "ignore")
    return d.message.trim() ? { type: "ignore", note: d.message.trim() } : { type: "ignore" };
  return { type: "approve" };
}

export function ToolReviewForm(props: DecisionFormProps<"tool_review">) {
  const { interruptId, payload, taken, otherWay } = props;
  const form = useDecisionForm(props);
  const { id, refusal } = form;
  const takenDecisions = taken ? reviewDecisions(taken) : [];
  const [drafts, setDrafts] = useState<Draft[]>(() =>
    payload.requests.map((r, i) => {
      const draft = initialDraft(r, takenDecisions[i]);
      // "Answer differently": each call opens on the other way, when the call allows it.
      const verb = taken ? undefined : otherWay?.calls?.[i];
      // agent-inbox's way not to make a call is "ignore".
      const other = verb === "reject" && !r.allowed.includes("reject") ? "ignore" : verb;
      return other && r.allowed.includes(other) ? { ...draft, type: other } : draft;
    }),
  );
  const update = (i: number, change: Partial<Draft>) =>
    setDrafts((all) => all.map((d, j) => (j === i ? { ...d, ...change } : d)));
  // The answer as it would go now (a call not decided yet counted as approved): what the contract says of it is what
  // the card says — LangChain's middleware runs none of a batch with a refusal (`sentBackToModel`).
  const decisions = drafts.map((d, i) => decisionOf(payload.requests[i] as ReviewedToolCall, d));
  const answer = encodeDecisions(payload, decisions) as AnswerOf["tool_review"];
  const approving = drafts.some((d) => d.type === "approve" || d.type === "edit");
  const sentBack = approving && sentBackToModel(answer);
  const acts = approving && !sentBack;
  const undecided = drafts.some((d) => d.type === null);
  // An edit typed as JSON (a tool with no argument schema) goes only once the text is one JSON object.
  const jsonProblems = drafts.map((d, i) =>
    propertiesOf(payload.requests[i] as ReviewedToolCall) ? null : readJsonArgs(d.json),
  );
  const jsonWrong = drafts.some((d, i) => d.type === "edit" && jsonProblems[i]?.ok === false);

  const submit = () => {
    if (undecided) return;
    form.submit(answer, { acts });
  };

  return (
    <form
      noValidate
      onSubmit={form.onSubmit(submit)}
      className="space-y-4"
      aria-label="Review the agent's tool calls"
      data-interrupt={interruptId}
    >
      {otherWay?.calls && !taken && !form.closed && (
        <SuggestedAnswer>
          Answering differently: each call below opens on the way the other line did not take it.
        </SuggestedAnswer>
      )}
      {payload.requests.map((request, i) => {
        const draft = drafts[i] as Draft;
        const props = propertiesOf(request);
        return (
          <fieldset
            // biome-ignore lint/suspicious/noArrayIndexKey: the requests are fixed for the question, in order
            key={i}
            data-testid="tool-call-card"
            className="space-y-3 rounded border border-slate-200 p-3 dark:border-slate-700"
          >
            <legend className="px-1 font-mono text-sm font-semibold">
              <bdi>{request.name}</bdi>
            </legend>
            {request.description && (
              // The agent's Markdown, rendered safely; dir="auto" isolates its direction as <bdi> did.
              <div
                dir="auto"
                data-testid="tool-call-description"
                className="space-y-1 text-sm text-slate-700 dark:text-slate-300"
              >
                <AgentMarkdown text={request.description} />
              </div>
            )}
            <dl
              className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-1 text-sm"
              data-testid="tool-call-args"
            >
              {Object.entries(request.args).map(([name, value]) => {
                const money = isMoneyArg(name) && typeof value === "number";
                return (
                  <div key={name} className="contents">
                    <dt className="text-slate-500">
                      {humanize(fieldWords(money ? name.replace(/Cents$/, "") : name))}
                    </dt>
                    <dd className="font-mono" data-arg={name}>
                      <bdi>
                        {money
                          ? `${asMoney(value)}${typeof request.args.currency === "string" ? ` ${request.args.currency}` : ""}`
                          : typeof value === "string"
                            ? value
                            : JSON.stringify(value)}
                      </bdi>
                    </dd>
                  </div>
                );
              })}
            </dl>
            <div
              role="radiogroup"
              aria-label={`Decision on ${request.name}`}
              className="flex flex-wrap gap-3 text-sm"
            >
              {request.allowed.map((type) => {
                const blocked = Boolean(refusal) && (type === "approve" || type === "edit");
                return (
                  <label key={type} className="flex items-center gap-1">
                    <input
                      type="radio"
                      name={`${id}-${i}-decision`}
                      value={type}
                      data-testid={`tool-decision-${type}`}
                      checked={draft.type === type}
                      disabled={form.closed || blocked}
                      onChange={() => update(i, { type })}
                    />
                    {VERBS[type]}
                  </label>
                );
              })}
            </div>
            {draft.type === "edit" &&
              (props ? (
                <div className="grid gap-2 sm:grid-cols-2">
                  {props.map(([name, prop]) => (
                    <div key={name}>
                      <FieldLabel
                        htmlFor={`${id}-${i}-${name}`}
                        hint={
                          moneyField(name, prop)
                            ? `(${typeof request.args.currency === "string" ? `${request.args.currency}, ` : ""}${
                                prop.minimum !== undefined && prop.maximum !== undefined
                                  ? `${asMoney(prop.minimum)} to ${asMoney(prop.maximum)}`
                                  : "an amount like 2.50"
                              })`
                            : prop.description
                              ? `(${prop.description})`
                              : undefined
                        }
                      >
                        {humanize(fieldWords(moneyField(name, prop) ? name.replace(/Cents$/, "") : name))}
                      </FieldLabel>
                      {prop.type === "boolean" ? (
                        <input
                          id={`${id}-${i}-${name}`}
                          type="checkbox"
                          checked={draft.fields[name] === true}
                          disabled={form.closed}
                          onChange={(e) =>
                            update(i, { fields: { ...draft.fields, [name]: e.target.checked } })
                          }
                        />
                      ) : prop.enum ? (
                        <select
                          id={`${id}-${i}-${name}`}
                          className={controlClass}
                          value={String(draft.fields[name] ?? "")}
                          disabled={form.closed}
                          onChange={(e) => update(i, { fields: { ...draft.fields, [name]: e.target.value } })}
                        >
                          {prop.enum.map((v) => (
                            <option key={String(v)} value={String(v)}>
                              {String(v)}
                            </option>
                          ))}
                        </select>
                      ) : (
                        <input
                          id={`${id}-${i}-${name}`}
                          data-testid={`tool-arg-${name}`}
                          className={controlClass}
                          type={prop.type === "integer" || prop.type === "number" ? "number" : "text"}
                          step={moneyField(name, prop) ? 0.01 : prop.type === "integer" ? 1 : "any"}
                          min={
                            moneyField(name, prop) && prop.minimum !== undefined
                              ? prop.minimum / 100
                              : prop.minimum
                          }
                          max={
                            moneyField(name, prop) && prop.maximum !== undefined
                              ? prop.maximum / 100
                              : prop.maximum
                          }
                          maxLength={prop.maxLength}
                          value={String(draft.fields[name] ?? "")}
                          disabled={form.closed}
                          onChange={(e) => update(i, { fields: { ...draft.fields, [name]: e.target.value } })}
                        />
                      )}
                    </div>
                  ))}
                </div>
              ) : (
                <div>
                  <FieldLabel htmlFor={`${id}-${i}-json`} hint="(a JSON object)">
                    Arguments
                  </FieldLabel>
                  <textarea
                    id={`${id}-${i}-json`}
                    rows={4}
                    className={`${controlClass} font-mono`}
                    value={draft.json}
                    disabled={form.closed}
                    aria-invalid={jsonProblems[i]?.ok === false}
                    aria-describedby={`${id}-${i}-json-error`}
                    onChange={(e) => update(i, { json: e.target.value })}
                  />
                  <p
                    id={`${id}-${i}-json-error`}
                    className="mt-1 text-xs text-red-700"
                    data-testid="tool-arg-json-error"
                    role="status"
                  >
                    {jsonProblems[i]?.ok === false ? jsonProblems[i].error : ""}
                  </p>
                </div>
              ))}
            {(draft.type === "reject" || draft.type === "respond" || draft.type === "ignore") && (
              <div>
                <FieldLabel
                  htmlFor={`${id}-${i}-message`}
                  hint={
                    draft.type === "respond"
                      ? "(required; the agent reads it)"
                      : draft.type === "ignore"
                        ? "(optional; kept with the decision and given to the agent)"
                        : "(optional; the agent reads it)"
                  }
                >
                  {draft.type === "respond"
                    ? "Answer to the agent"
                    : draft.type === "ignore"
                      ? "Note"
                      : "Why"}
                </FieldLabel>
                <textarea
                  id={`${id}-${i}-message`}
                  data-testid="tool-decision-message"
                  rows={2}
                  maxLength={2000}
                  className={controlClass}
                  value={draft.message}
                  disabled={form.closed}
                  onChange={(e) => update(i, { message: e.target.value })}
                />
              </div>
            )}
          </fieldset>
        );
      })}
      {sentBack && !form.closed && (
        <p
          role="status"
          className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950"
          data-testid="batch-sent-back"
        >
          This agent runs none of these calls once one is refused: the ones you approve will not run now. The
          agent is asked again with your reasons and may propose them again, for another review.
        </p>
      )}
      {refusal && <RefusalNote id={form.refusalId} reason={refusal} then={null} />}
      <Button
        type="submit"
        disabled={form.closed || undecided || jsonWrong || (acts && form.actClosed)}
        data-testid="submit-review"
        data-shortcut="a"
      >
        {payload.requests.length === 1 ? "Submit decision" : "Submit decisions"}
      </Button>
    </form>
  );
}
