import type { AssistantMessage, Message, ToolCall, ToolMessage } from "@ag-ui/core";

/*
 * Immutable updates of the AG-UI message list, keyed by id so replaying an event never duplicates a message:
 * a start for an id that exists restarts it in place, a tool result for an existing id replaces it.
 */

/** Start (or restart) a streamed text message. */
export function upsertTextMessage(messages: Message[], id: string, role: string): Message[] {
  const existing = messages.findIndex((m) => m.id === id);
  if (existing >= 0) {
    return messages.map((m, i) => (i === existing ? ({ ...m, content: "" } as Message) : m));
  }
  const created = { id, role: role === "user" ? "user" : "assistant", content: "" } as Message;
  return [...messages, created];
}

/** Append a streamed text delta (a delta for an unknown id starts the message: nothing typed is lost). */
export function appendText(messages: Message[], id: string, delta: string): Message[] {
  if (!messages.some((m) => m.id === id)) {
    return [...messages, { id, role: "assistant", content: delta }];
  }
  return messages.map((m) => {
    if (m.id !== id) return m;
    const before = typeof m.content === "string" ? m.content : "";
    return { ...m, content: before + delta } as Message;
  });
}

/** Start (or restart) a tool call on its parent assistant message, creating that message when needed. */
export function upsertToolCall(
  messages: Message[],
  toolCallId: string,
  name: string,
  parentMessageId: string | undefined,
): Message[] {
  const call: ToolCall = { id: toolCallId, type: "function", function: { name, arguments: "" } };
  const holder = messages.findIndex(
    (m) => m.role === "assistant" && m.toolCalls?.some((c) => c.id === toolCallId),
  );
  if (holder >= 0) return mapToolCall(messages, toolCallId, () => call);
  const parent = parentMessageId
    ? messages.findIndex((m) => m.id === parentMessageId && m.role === "assistant")
    : -1;
  if (parent >= 0) {
    return messages.map((m, i) =>
      i === parent && m.role === "assistant" ? { ...m, toolCalls: [...(m.toolCalls ?? []), call] } : m,
    );
  }
  const created: AssistantMessage = {
    id: parentMessageId ?? toolCallId,
    role: "assistant",
    toolCalls: [call],
  };
  return [...messages, created];
}

export function appendToolArgs(messages: Message[], toolCallId: string, delta: string): Message[] {
  return mapToolCall(messages, toolCallId, (c) => ({
    ...c,
    function: { ...c.function, arguments: c.function.arguments + delta },
  }));
}

/** Record a tool's result right after the assistant message that called it (or replace the one with this id). */
export function upsertToolResult(
  messages: Message[],
  id: string,
  toolCallId: string,
  content: string,
): Message[] {
  const result: ToolMessage = { id, role: "tool", toolCallId, content };
  if (messages.some((m) => m.id === id)) return messages.map((m) => (m.id === id ? result : m));
  const caller = messages.findIndex(
    (m) => m.role === "assistant" && m.toolCalls?.some((c) => c.id === toolCallId),
  );
  if (caller < 0) return [...messages, result];
  let at = caller + 1;
  while (at < messages.length && messages[at]?.role === "tool") at += 1;
  return [...messages.slice(0, at), result, ...messages.slice(at)];
}

function mapToolCall(messages: Message[], toolCallId: string, update: (c: ToolCall) => ToolCall): Message[] {
  return messages.map((m) =>
    m.role === "assistant" && m.toolCalls?.some((c) => c.id === toolCallId)
      ? { ...m, toolCalls: m.toolCalls.map((c) => (c.id === toolCallId ? update(c) : c)) }
      : m,
  );
}

/** The text of a message's content, whatever its shape (string, or parts of which only text is kept). */
export function messageText(message: Message): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => (p && typeof p === "object" && "text" in p && typeof p.text === "string" ? p.text : ""))
    .join("");
}
