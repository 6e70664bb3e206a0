"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { type ForkField, forkFields, readField } from "@/components/history/fork-schema";
import { Button } from "@/components/ui/button";
import { errorMessage } from "@/components/ui/fetch-json";
import { controlClass, LengthCounter } from "@/components/ui/field";
import { useHydrated } from "@/components/ui/use-hydrated";
import { humanize } from "@/lib/contract/humanize";
import type { OrderChoice } from "@/lib/contract/views/orders";
import { orderFacts, orderLabel, sampleMessage } from "./order-text";
import { createTicket, startFirstRun } from "./start-ticket";

const MAX_MESSAGE = 5000;
const field = `mt-1 ${controlClass}`;

/** An agent a ticket can go to, as the form lists it: `intake` is its ticket's JSON Schema (its `intake.schema`). */
export interface AgentChoice {
  id: string;
  title: string;
  description: string;
  intake: Record<string, unknown>;
}

/** A field of an agent's ticket besides the message, as the form shows it. */
interface TicketField extends ForkField {
  required: boolean;
}

/** The agent's own ticket fields (the message is always there and drawn apart), in its schema's order. */
function ticketFields(intake: Record<string, unknown>): TicketField[] {
  const required = new Set(Array.isArray(intake.required) ? intake.required : []);
  return forkFields(intake)
    .filter((f) => f.name !== "message")
    .map((f) => ({ ...f, required: required.has(f.name) && f.defaultValue === undefined }));
}

function initialValues(fields: TicketField[]): Record<string, string> {
  return Object.fromEntries(fields.map((f) => [f.name, f.defaultValue ?? ""]));
}

/**
 * A customer ticket: which agent handles it, the message and (optionally) the order it is about. Submitting creates
 * the thread, starts the agent on it and opens the thread page, which follows the run live.
 */
export function NewTicketForm({
  orders,
  agents,
  renderedAt,
}: {
  orders: OrderChoice[];
  agents: AgentChoice[];
  renderedAt: number;
}) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [agentId, setAgentId] = useState(agents[0]?.id ?? "refund");
  const agent = agents.find((a) => a.id === agentId);
  const fields = ticketFields(agent?.intake ?? {});
  const [message, setMessage] = useState("");
  const [values, setValues] = useState<Record<string, string>>(() => initialValues(fields));
  const orderField = fields.find((f) => f.widget === "order");
  const orderId = orderField ? (values[orderField.name] ?? "") : "";
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ text: string; threadId?: string } | null>(null);
  const order = orders.find((o) => o.id === orderId);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const text = message.trim();
    if (!text) return setError({ text: "Write the customer's message first." });
    const ticket: Record<string, unknown> = { message: text };
    for (const field of fields) {
      const raw = values[field.name] ?? "";
      if (raw.trim() === "" && !field.required) continue;
      const reading = readField(field, raw);
      if (!reading.ok) return setError({ text: `${field.title ?? humanize(field.name)} ${reading.error}.` });
      ticket[field.name] = reading.value;
    }
    setBusy(true);
    setError(null);
    let threadId: string | undefined;
    try {
      threadId = await createTicket(agentId, ticket);
      await startFirstRun(threadId, text);
      router.push(`/threads/${threadId}`);
    } catch (e) {
      setBusy(false);
      setError(
        threadId
          ? { text: `The ticket was created but the agent did not start: ${errorMessage(e)}`, threadId }
          : { text: errorMessage(e) },
      );
    }
  };

  return (
    <form
      onSubmit={submit}
      data-testid="new-ticket"
      data-ready={hydrated ? "true" : "false"}
      aria-busy={busy}
      className="space-y-5 rounded-lg border border-slate-200 bg-white p-6 shadow-sm"
    >
      <SelectField
        id="ticket-agent"
        label="Kind of request"
        value={agentId}
        onChange={(id) => {
          // Another agent takes another ticket: its own fields, from its own defaults (the message stays).
          setAgentId(id);
          const next = agents.find((a) => a.id === id);
          setValues((typed) => ({
            ...initialValues(ticketFields(next?.intake ?? {})),
            ...keepOrder(typed, next),
          }));
        }}
        help={agent?.description}
        options={agents.map((a) => ({ value: a.id, label: a.title }))}
      />
      {fields.map((field) =>
        field.widget === "order" ? (
          <SelectField
            key={field.name}
            id="ticket-order"
            label={field.title ?? "Order"}
            value={orderId}
            onChange={(v) => setValues((typed) => ({ ...typed, [field.name]: v }))}
            help={
              order
                ? orderFacts(order, renderedAt)
                : "Demo orders: refunds up to €50 on recent, delivered, unflagged orders are approved by policy; the rest wait for an operator."
            }
            options={[
              ...(field.required
                ? []
                : [{ value: "", label: "No order: the agent asks for the order number" }]),
              ...orders.map((o) => ({ value: o.id, label: orderLabel(o) })),
            ]}
          />
        ) : (
          <OwnField
            key={field.name}
            field={field}
            value={values[field.name] ?? ""}
            onChange={(v) => setValues((typed) => ({ ...typed, [field.name]: v }))}
          />
        ),
      )}
      <div>
        <div className="flex items-baseline justify-between gap-4">
          <label htmlFor="ticket-message" className="block text-sm font-semibold text-slate-800">
            Customer message
          </label>
          <button
            type="button"
            onClick={() => setMessage(sampleMessage(order))}
            className="text-xs font-medium text-indigo-800 underline underline-offset-2"
          >
            Use a sample message
          </button>
        </div>
        <textarea
          id="ticket-message"
          data-testid="ticket-message"
          required
          rows={6}
          maxLength={MAX_MESSAGE}
          className={field}
          value={message}
          aria-describedby="ticket-message-count"
          onChange={(e) => setMessage(e.target.value)}
          placeholder="What the customer wrote, e.g. “My headphones from ORD-1002 stopped charging, I want a refund.”"
        />
        <LengthCounter id="ticket-message-count" length={message.length} limit={MAX_MESSAGE} />
      </div>
      {error && (
        <div
          role="alert"
          data-testid="ticket-error"
          className="rounded-md bg-red-50 p-3 text-sm text-red-800"
        >
          {error.text}
          {error.threadId && (
            <>
              {" "}
              <a href={`/threads/${error.threadId}`} className="font-medium underline">
                Open the thread
              </a>
            </>
          )}
        </div>
      )}
      <div className="flex items-center gap-3">
        <Button type="submit" disabled={busy} data-testid="ticket-submit">
          {busy ? "Starting the agent…" : "Create ticket and start the agent"}
        </Button>
        <span className="text-xs text-slate-600">You will follow the run on the thread page.</span>
      </div>
    </form>
  );
}

/** The order picked for one agent's ticket stays picked for another's that has an order field too. */
function keepOrder(typed: Record<string, string>, next: AgentChoice | undefined): Record<string, string> {
  const from = Object.entries(typed).find(([, v]) => /^ORD-\d{4}$/.test(v));
  const to = ticketFields(next?.intake ?? {}).find((f) => f.widget === "order");
  return from && to ? { [to.name]: from[1] } : {};
}

/**
 * A field only this agent's ticket has, drawn from its schema: a choice is a select, a yes/no a checkbox, a number a
 * number box, anything else a line of text; its label and help are the schema's words (`.meta`).
 */
function OwnField({
  field,
  value,
  onChange,
}: {
  field: TicketField;
  value: string;
  onChange: (value: string) => void;
}) {
  const id = `ticket-field-${field.name}`;
  const label = field.title ?? humanize(field.name);
  if (field.kind === "choice") {
    return (
      <SelectField
        id={id}
        label={label}
        value={value}
        onChange={onChange}
        help={field.description}
        options={[
          ...(field.required || field.defaultValue !== undefined ? [] : [{ value: "", label: "—" }]),
          ...field.choices.map((c) => ({ value: c, label: humanize(c) })),
        ]}
      />
    );
  }
  if (field.kind === "boolean") {
    return (
      <div className="flex items-start gap-2">
        <input
          id={id}
          data-testid={id}
          type="checkbox"
          className="mt-1"
          checked={value === "true"}
          onChange={(e) => onChange(e.target.checked ? "true" : "false")}
          aria-describedby={`${id}-help`}
        />
        <div>
          <label htmlFor={id} className="text-sm font-semibold text-slate-800">
            {label}
          </label>
          <p id={`${id}-help`} className="text-xs text-slate-600">
            {field.description}
          </p>
        </div>
      </div>
    );
  }
  return (
    <div>
      <label htmlFor={id} className="block text-sm font-semibold text-slate-800">
        {label}
        {!field.required && <span className="font-normal text-slate-600"> (optional)</span>}
      </label>
      <input
        id={id}
        data-testid={id}
        className={`mt-1 ${controlClass}`}
        type={field.kind === "text" ? "text" : "number"}
        inputMode={field.kind === "integer" ? "numeric" : undefined}
        required={field.required}
        minLength={field.minLength}
        maxLength={field.maxLength}
        min={field.min}
        max={field.max}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={`${id}-help`}
      />
      <p id={`${id}-help`} className="mt-1 text-xs text-slate-600">
        {field.description}
      </p>
    </div>
  );
}

/** A labelled select with a line of help under it (`data-testid` is the id). */
function SelectField({
  id,
  label,
  value,
  onChange,
  help,
  options,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  help?: string;
  options: { value: string; label: string }[];
}) {
  return (
    <div>
      <label htmlFor={id} className="block text-sm font-semibold text-slate-800">
        {label}
      </label>
      <select
        id={id}
        data-testid={id}
        className={field}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={`${id}-help`}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <p id={`${id}-help`} className="mt-1 text-xs text-slate-600">
        {help}
      </p>
    </div>
  );
}
