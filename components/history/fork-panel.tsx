"use client";

import { type FormEvent, useEffect, useState } from "react";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { controlClass } from "@/components/ui/field";
import { appErrorOf } from "@/lib/contract/errors";
import { humanize } from "@/lib/contract/humanize";
import { fieldWords } from "@/lib/contract/questions/tool-review";
import type { SideEffectWarning } from "@/lib/contract/views/history";
import { formatMoney } from "@/lib/contract/wire";
import { type ForkField, forkFields, readField, showField } from "./fork-schema";
import { parseForkValues } from "./fork-values";
import { SideEffectNotice } from "./side-effect-notice";
import { useSideEffects } from "./use-side-effects";

/** `POST /api/threads/{id}/fork` → 202. */
export interface ForkResponse {
  runId: string;
  forkedFrom: string;
  checkpointId: string;
  warnings: SideEffectWarning[];
  events: string;
}

const field = `mt-1 ${controlClass}`;

/**
 * Time travel: start a new branch from this checkpoint, optionally editing state first (as a node, which decides
 * what runs next). Warns beforehand what the branch may repeat. The branch becomes the thread's head and runs in the
 * background; its decisions are taken on the thread page.
 */
export function ForkPanel({
  threadId,
  checkpointId,
  version,
  nodes,
  channels,
  schema,
  current,
  onForked,
}: {
  threadId: string;
  checkpointId: string;
  version: string;
  nodes: readonly string[];
  channels: readonly string[];
  /** The agent's editable state as JSON Schema: one form field per property. */
  schema?: unknown;
  /** The state at this checkpoint: each field's starting value. */
  current?: Record<string, unknown>;
  onForked: (result: ForkResponse) => void;
}) {
  const { warnings, failed } = useSideEffects(threadId, checkpointId, version);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState("");
  const [asNode, setAsNode] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const fields = forkFields(schema);
  const [typed, setTyped] = useState<Record<string, string>>({});
  const read = editing ? parseForkValues(text, channels) : ({ ok: true, values: undefined } as const);
  // A field that is not a value of its kind (words in a number field) keeps the fork closed until it is right or
  // emptied; its bounds and every other rule are the server's, in the agent's words (the check below).
  const wrongField = editing
    ? fields.find((f) => f.name in typed && !readField(f, typed[f.name] ?? "").ok)
    : undefined;
  const body =
    read.ok && !wrongField
      ? {
          checkpointId,
          ...(read.values ? { values: read.values } : {}),
          ...(editing && asNode ? { asNode } : {}),
        }
      : null;
  const key = body ? JSON.stringify(body) : "";
  const verdict = useForkCheck(threadId, editing && body && (body.values || body.asNode) ? body : null, key);
  const parsed = !read.ok
    ? read
    : wrongField
      ? ({ ok: false, error: `Correct ${wrongField.name} first.` } as const)
      : verdict?.message
        ? ({ ok: false, error: verdict.message } as const)
        : read;
  // While the server has not said yet whether these edits hold, the fork waits.
  const checking = editing && body !== null && Boolean(body.values || body.asNode) && verdict === null;

  /** A field typed into: its value goes into the state changes (the JSON box), or out again if it is unchanged. */
  const type = (field: ForkField, raw: string) => {
    setTyped((t) => ({ ...t, [field.name]: raw }));
    const reading = readField(field, raw);
    if (!reading.ok) return;
    const base = parseForkValues(text, channels);
    const values: Record<string, unknown> = { ...(base.ok && base.values ? base.values : {}) };
    if (showField(reading.value, field) === showField(current?.[field.name], field))
      delete values[field.name];
    else values[field.name] = reading.value;
    setText(Object.keys(values).length > 0 ? JSON.stringify(values, null, 2) : "");
  };

  const fork = async (event: FormEvent) => {
    event.preventDefault();
    if (!parsed.ok) return setProblem(parsed.error);
    setBusy(true);
    setProblem(null);
    try {
      const body = {
        checkpointId,
        ...(parsed.values ? { values: parsed.values } : {}),
        ...(editing && asNode ? { asNode } : {}),
      };
      const forked = await postJson<ForkResponse>(`/api/threads/${encodeURIComponent(threadId)}/fork`, body);
      onForked(forked);
    } catch (e) {
      setProblem(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={fork} className="space-y-3" data-testid="fork-panel" aria-labelledby="fork-heading">
      <h3 id="fork-heading" className="text-sm font-semibold">
        Fork from here
      </h3>
      <p className="text-sm text-slate-700">
        Starts a new branch at this checkpoint and runs the agent from it. The current line stays in the
        history as a branch of its own.
      </p>
      <SideEffectNotice warnings={warnings} failed={failed} />
      <label className="flex items-center gap-2 text-sm">
        <input type="checkbox" checked={editing} onChange={(e) => setEditing(e.target.checked)} />
        Edit the state before forking
      </label>
      {editing && (
        <div className="space-y-3 rounded-md bg-slate-50 p-3">
          {fields.length > 0 && (
            <fieldset className="space-y-3" data-testid="fork-form">
              <legend className="text-xs font-semibold text-slate-700">
                Change what this step knew (each field starts at its value here)
              </legend>
              {fields.map((f) => (
                <ForkFieldInput
                  key={f.name}
                  field={f}
                  raw={typed[f.name] ?? showField(current?.[f.name], f)}
                  onType={(raw) => type(f, raw)}
                  serverRule={verdict?.issues[f.name]}
                  currency={currencyOf(current)}
                />
              ))}
            </fieldset>
          )}
          <div>
            <label htmlFor="fork-values" className="block text-xs font-semibold text-slate-700">
              State changes (JSON object)
            </label>
            <textarea
              id="fork-values"
              data-testid="fork-values"
              rows={5}
              className={`${field} font-mono`}
              value={text}
              onChange={(e) => setText(e.target.value)}
              placeholder='{"requested": 10000}'
              aria-invalid={!parsed.ok}
              aria-describedby="fork-values-help"
            />
            <p
              id="fork-values-help"
              className={`mt-1 text-xs ${parsed.ok ? "text-slate-600" : "text-red-700"}`}
            >
              {parsed.ok
                ? `Keys you may set: ${channels.join(", ")}. Decisions, amounts approved and what was paid or sent cannot be edited: fork from before the question and answer it again.`
                : parsed.error}
            </p>
          </div>
          <div>
            <label htmlFor="fork-as-node" className="block text-xs font-semibold text-slate-700">
              Apply as if this node wrote it (optional)
            </label>
            <select
              id="fork-as-node"
              className={field}
              value={asNode}
              onChange={(e) => setAsNode(e.target.value)}
            >
              <option value="">Default: the node that wrote this checkpoint</option>
              {nodes.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </div>
        </div>
      )}
      {problem && (
        <p role="alert" className="rounded-md bg-red-50 p-2 text-sm text-red-800" data-testid="fork-error">
          {problem}
        </p>
      )}
      <Button type="submit" disabled={busy || !parsed.ok || checking} data-testid="fork-submit">
        {busy ? "Forking…" : "Fork from here"}
      </Button>
    </form>
  );
}

/** One field of the fork form: its input by kind, and the rule it breaks (in words) while typing. */
/** The currency the state's amounts are in: its order's, when it has one. */
function currencyOf(values: Record<string, unknown> | null | undefined): string {
  const order = values?.order as { currency?: unknown } | null | undefined;
  return typeof order?.currency === "string" ? order.currency : "EUR";
}

/** A field's name as people read it: the schema's title, else its name in words ("customerMessage" → "Customer message"). */
export function fieldLabel(field: ForkField): string {
  return field.title ?? humanize(fieldWords(field.name));
}

function ForkFieldInput({
  field,
  raw,
  onType,
  serverRule,
  currency,
}: {
  field: ForkField;
  raw: string;
  onType: (raw: string) => void;
  /** The currency of an amount in cents (`widget: "money"`): typed in it, said beside it as money. */
  currency: string;
  /** The rule this field's value breaks, as the server says it (the agent's words), if it breaks one. */
  serverRule?: string;
}) {
  const id = `fork-field-${field.name}`;
  const reading = readField(field, raw);
  const error = !reading.ok ? reading.error : (serverRule ?? null);
  const hint = [
    field.nullable ? "empty: none" : null,
    field.min !== undefined ? `${field.minExclusive ? "more than" : "from"} ${field.min}` : null,
    field.max !== undefined && field.max < 2_000_000_000 ? `up to ${field.max}` : null,
    field.maxLength !== undefined ? `up to ${field.maxLength} characters` : null,
  ]
    .filter(Boolean)
    .join(", ");
  const describedBy = `${id}-note`;
  const label = fieldLabel(field);
  // An amount is typed in the currency ("249.00") and said back as money beside it (€249.00).
  const money =
    field.widget === "money" && reading.ok && typeof reading.value === "number"
      ? formatMoney(reading.value, currency)
      : null;
  return (
    <div data-testid="fork-field" data-field={field.name}>
      <label htmlFor={id} className="block text-xs font-semibold text-slate-700">
        {label}
        {field.widget === "money" ? (
          <span className="font-normal text-slate-600">
            {" "}
            (in {currency}
            {field.nullable ? "; empty: none" : ""})
          </span>
        ) : (
          hint && <span className="font-normal text-slate-600"> ({hint})</span>
        )}
      </label>
      {field.description && <p className="text-xs text-slate-600">{field.description}</p>}
      {field.kind === "choice" || field.kind === "boolean" ? (
        <select
          id={id}
          className={`mt-1 ${controlClass}`}
          value={raw}
          onChange={(e) => onType(e.target.value)}
          aria-describedby={describedBy}
        >
          {(field.nullable || raw === "") && <option value="">(none)</option>}
          {(field.kind === "boolean" ? ["true", "false"] : field.choices).map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      ) : field.kind === "text" && (field.maxLength ?? 0) > 200 ? (
        <textarea
          id={id}
          rows={3}
          className={`mt-1 ${controlClass}`}
          value={raw}
          onChange={(e) => onType(e.target.value)}
          aria-invalid={error !== null}
          aria-describedby={describedBy}
        />
      ) : (
        <input
          id={id}
          inputMode={
            field.widget === "money"
              ? "decimal"
              : field.kind === "integer" || field.kind === "number"
                ? "numeric"
                : undefined
          }
          className={`mt-1 ${controlClass}`}
          value={raw}
          onChange={(e) => onType(e.target.value)}
          aria-invalid={error !== null}
          aria-describedby={describedBy}
        />
      )}
      {money && (
        <p className="mt-1 text-xs text-slate-700" data-testid="fork-field-money">
          = {money}
        </p>
      )}
      <p id={describedBy} className="mt-1 text-xs text-red-700" data-testid="fork-field-error" role="status">
        {error === null ? "" : `${label} ${error}`}
      </p>
    </div>
  );
}

/** What the server said of a set of fork edits: each field's broken rule, and the whole in one sentence. */
interface ForkVerdict {
  issues: Record<string, string>;
  message: string | null;
}

/**
 * Ask the server whether these edits hold (`POST …/fork/check`, the fork's own checks, writing nothing), a moment
 * after the typing stops. Null until it answered for exactly these edits (`key`); an answer it cannot give (the
 * network) lets the fork itself say.
 */
function useForkCheck(threadId: string, body: object | null, key: string): ForkVerdict | null {
  const [answer, setAnswer] = useState<{ key: string; verdict: ForkVerdict } | null>(null);
  const wanted = body ? key : "";
  useEffect(() => {
    if (!wanted) return;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      postJson(`/api/threads/${encodeURIComponent(threadId)}/fork/check`, JSON.parse(wanted), {
        signal: controller.signal,
      })
        .then(() => setAnswer({ key: wanted, verdict: { issues: {}, message: null } }))
        .catch((error: unknown) => {
          if (controller.signal.aborted) return;
          const known = appErrorOf(error);
          const issues = Array.isArray(known?.details?.issues)
            ? (known.details.issues as { field?: unknown; message?: unknown }[])
            : [];
          const byField = Object.fromEntries(
            issues
              .filter((i) => typeof i.field === "string" && typeof i.message === "string")
              .map((i) => [i.field as string, i.message as string]),
          );
          const said = Object.entries(byField).map(([field, rule]) => `${field} ${rule}`);
          const message = !known
            ? null
            : known.type === "unprocessable"
              ? said.length > 0
                ? `${said.join("; ")}.`
                : errorMessage(error)
              : null;
          setAnswer({ key: wanted, verdict: { issues: byField, message } });
        });
    }, 250);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [threadId, wanted]);
  if (!wanted) return { issues: {}, message: null };
  return answer?.key === wanted ? answer.verdict : null;
}
