import type { Message } from "@ag-ui/core";
import type { ThreadView } from "@/lib/contract/views/thread";
import type { EffectView } from "@/lib/contract/wire";
import { messageText } from "./messages";
import { ToolCallCard } from "./tool-call-card";

/**
 * The conversation: the customer's message, the agent's tool calls with their results, and the agent's text as it
 * streams in. Tool results are shown with the call they answer.
 */
export function Conversation({
  messages,
  streamingIds,
  customerMessage,
  values = {},
  effects = [],
  queued = [],
}: {
  messages: Message[];
  streamingIds: string[];
  customerMessage: string;
  /** The thread's state: whether the agent's reply is still a draft, was not sent, or went out edited. */
  values?: Record<string, unknown>;
  /** The thread's effects as the ledger has them now: whether the reply's email is queued, delivered or failed. */
  effects?: EffectView[];
  /** Messages that arrived while the agent was busy and run after it (double texting), oldest first. */
  queued?: ThreadView["queuedInputs"];
}) {
  const reply = replyState(values, effects);
  const lastAgentText = [...messages]
    .reverse()
    .find((m) => m.role === "assistant" && messageText(m) && !streamingIds.includes(m.id))?.id;
  const results = new Map<string, string>();
  for (const m of messages) if (m.role === "tool") results.set(m.toolCallId, messageText(m));
  const calls = new Set(
    messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : [])),
  );
  const shown: Message[] =
    messages.length > 0 ? messages : [{ id: "ticket", role: "user", content: customerMessage }];
  return (
    <section aria-labelledby="conversation-heading" className="space-y-3">
      <h2 id="conversation-heading" className="text-base font-semibold text-slate-900">
        Conversation
      </h2>
      <ol className="space-y-3" data-testid="conversation" aria-busy={streamingIds.length > 0}>
        {shown.map((m) => {
          if (m.role === "tool") {
            return calls.has(m.toolCallId) ? null : (
              <ToolCallCard
                key={m.id}
                call={{ id: m.toolCallId, type: "function", function: { name: "tool", arguments: "" } }}
                result={messageText(m)}
              />
            );
          }
          if (m.role !== "user" && m.role !== "assistant") return null;
          const text = messageText(m);
          const toolCalls = m.role === "assistant" ? (m.toolCalls ?? []) : [];
          return [
            text || streamingIds.includes(m.id) ? (
              <TextMessage
                key={m.id}
                message={m}
                text={m.id === lastAgentText && reply?.sentBody ? reply.sentBody : text}
                streaming={streamingIds.includes(m.id)}
                label={m.id === lastAgentText ? reply?.label : undefined}
              />
            ) : null,
            ...toolCalls.map((c) => <ToolCallCard key={c.id} call={c} result={results.get(c.id)} />),
          ];
        })}
        {queued.map((q, i) => (
          <li
            key={q.runId}
            data-testid="queued-message"
            className="mr-8 rounded-lg border border-dashed border-slate-300 bg-white p-3 text-sm"
          >
            <p className="text-xs font-medium text-slate-600">
              {q.strategy === "enqueue"
                ? `Waiting to run${i === 0 ? " after the current run and its decisions" : `, ${ordinal(i + 1)} in line`}`
                : "Runs next: the run it arrived during was stopped for it"}{" "}
              · from {q.from}
            </p>
            <p className="mt-1 whitespace-pre-wrap text-slate-900">{q.text}</p>
          </li>
        ))}
      </ol>
    </section>
  );
}

function ordinal(n: number): string {
  return n === 2 ? "2nd" : n === 3 ? "3rd" : `${n}th`;
}

/**
 * The agent's reply as the customer will get it (or did): a draft until an operator sends it, "not sent" when they
 * chose not to, and — sent after an edit — the edited text, not the draft. Once sent, what the label says of it is
 * the email effect's state now (the state's `email.status` is the snapshot of the step that queued it): queued until
 * the dispatcher delivers it, and said so when delivery failed or is unconfirmed.
 */
export function replyState(
  values: Record<string, unknown>,
  effects: readonly EffectView[] = [],
): { label: string; sentBody?: string } | null {
  const reply = values.reply as { body?: unknown } | null | undefined;
  if (!reply || typeof reply.body !== "string") return null;
  const email = values.email as { status?: unknown; effectId?: unknown } | null | undefined;
  if (!email) return { label: "Draft reply — not sent yet" };
  if (email.status === "not_sent") return { label: "Draft reply — not sent" };
  const live = effects.find((e) => e.id === email.effectId);
  const sentBody = reply.body;
  if (live && isDelivered(live)) return { label: "Agent — reply sent to the customer", sentBody };
  if (live?.status === "failed") return { label: "Agent — reply not delivered (see Side effects)", sentBody };
  if (live?.status === "unconfirmed")
    return { label: "Agent — reply handed to the mail server, arrival not confirmed", sentBody };
  if (live?.status === "handled") return { label: "Agent — reply not sent (handled by hand)", sentBody };
  return { label: "Agent — reply queued for the customer", sentBody };
}

const isDelivered = (e: EffectView) =>
  e.status === "delivered" || (e.status === "handled" && e.task?.resolution === "confirmed_delivered");

function TextMessage({
  message,
  text,
  streaming,
  label,
}: {
  message: Message;
  text: string;
  streaming: boolean;
  label?: string;
}) {
  const customer = message.role === "user";
  return (
    <li
      data-testid="message"
      data-role={message.role}
      data-message-id={message.id}
      data-streaming={streaming ? "true" : "false"}
      className={`rounded-lg p-3 text-sm ${customer ? "mr-8 bg-white ring-1 ring-slate-200" : "ml-8 bg-indigo-50 ring-1 ring-indigo-100"}`}
    >
      <p className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-600">
        {customer ? "Customer" : (label ?? "Agent")}
        {streaming && <span className="ml-2 font-normal normal-case tracking-normal">writing…</span>}
      </p>
      <p className="whitespace-pre-wrap break-words text-slate-900" data-testid="message-text">
        {text}
        {streaming && (
          <span
            aria-hidden="true"
            className="ml-0.5 inline-block h-4 w-1.5 animate-pulse bg-indigo-700 align-text-bottom"
          />
        )}
      </p>
    </li>
  );
}
