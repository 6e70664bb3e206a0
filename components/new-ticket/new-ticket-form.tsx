"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { Button } from "@/components/ui/button";
import { errorMessage } from "@/components/ui/fetch-json";
import { controlClass, LengthCounter } from "@/components/ui/field";
import { useHydrated } from "@/components/ui/use-hydrated";
import type { OrderChoice } from "@/lib/db/queries/orders-list";
import { orderFacts, orderLabel, sampleMessage } from "./order-text";
import { createTicket, startFirstRun } from "./start-ticket";

const MAX_MESSAGE = 5000;
const field = `mt-1 ${controlClass}`;

/** An agent a ticket can go to, as the form lists it. */
export interface AgentChoice {
  id: string;
  title: string;
  description: string;
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
  const [message, setMessage] = useState("");
  const [orderId, setOrderId] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ text: string; threadId?: string } | null>(null);
  const order = orders.find((o) => o.id === orderId);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const text = message.trim();
    if (!text) return setError({ text: "Write the customer's message first." });
    setBusy(true);
    setError(null);
    let threadId: string | undefined;
    try {
      threadId = await createTicket(text, orderId || null, agentId);
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
        onChange={setAgentId}
        help={agent?.description}
        options={agents.map((a) => ({ value: a.id, label: a.title }))}
      />
      <SelectField
        id="ticket-order"
        label="Order"
        value={orderId}
        onChange={setOrderId}
        help={
          order
            ? orderFacts(order, renderedAt)
            : "Demo orders: refunds up to €50 on recent, delivered, unflagged orders are approved by policy; the rest wait for an operator."
        }
        options={[
          { value: "", label: "No order: the agent asks for the order number" },
          ...orders.map((o) => ({ value: o.id, label: orderLabel(o) })),
        ]}
      />
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
