import type { ContentPart, Message, PartSource, ToolCall } from "@ag-ui/core";
import {
  AIMessage,
  type BaseMessage,
  ChatMessage,
  HumanMessage,
  type MessageContent,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { requireId } from "./events";

/**
 * LangChain messages → AG-UI messages, in order (the `MESSAGES_SNAPSHOT` body). Human → user, AI → assistant (text
 * only, with its `tool_calls`), tool → tool, system → system, a `ChatMessage` by its role. Throws on a message or
 * tool call without an id, and on a message type AG-UI cannot carry, rather than guessing.
 *
 * Dropped on purpose: non-text blocks of assistant content (reasoning, provider tool-use blocks — the tool calls
 * travel as `toolCalls`) and `invalid_tool_calls` (never executed, nothing can answer them).
 */
export function toAguiMessages(messages: readonly BaseMessage[]): Message[] {
  return messages.map(toAguiMessage);
}

/** One LangChain message → one AG-UI message. See {@link toAguiMessages}. */
export function toAguiMessage(message: BaseMessage): Message {
  const id = requireId(message.id, `${message.type} message`);
  const name = message.name ? { name: message.name } : {};
  if (ToolMessage.isInstance(message)) {
    return {
      id,
      role: "tool",
      toolCallId: requireId(message.tool_call_id, `tool message ${id}'s tool_call_id`),
      content: toAguiContent(message.content),
      ...(message.status === "error" ? { error: message.text || "tool failed" } : {}),
    };
  }
  if (AIMessage.isInstance(message)) {
    const toolCalls = aiToolCalls(message);
    return {
      id,
      role: "assistant",
      ...name,
      ...(message.text ? { content: message.text } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    };
  }
  if (HumanMessage.isInstance(message))
    return { id, role: "user", ...name, content: toAguiContent(message.content) };
  if (SystemMessage.isInstance(message)) return { id, role: "system", ...name, content: message.text };
  if (ChatMessage.isInstance(message)) return chatMessage(message, id);
  throw new Error(`agui: message ${id} has type "${message.type}", which has no AG-UI equivalent`);
}

/** The `tool_calls` of an AI message as AG-UI tool calls; arguments are the JSON text of LangChain's parsed args. */
export function aiToolCalls(message: AIMessage): ToolCall[] {
  return (message.tool_calls ?? []).map((call) => ({
    id: requireId(call.id, `tool call "${call.name}" of message ${message.id}`),
    type: "function",
    function: { name: call.name, arguments: toolCallArguments(call.args) },
  }));
}

/** LangChain keeps tool call args parsed; AG-UI carries them as JSON text. */
export function toolCallArguments(args: unknown): string {
  return JSON.stringify(args ?? {});
}

function chatMessage(message: ChatMessage, id: string): Message {
  const name = message.name ? { name: message.name } : {};
  switch (message.role) {
    case "user":
    case "human":
      return { id, role: "user", ...name, content: toAguiContent(message.content) };
    case "assistant":
    case "ai":
      return { id, role: "assistant", ...name, ...(message.text ? { content: message.text } : {}) };
    case "system":
    case "developer":
      return { id, role: message.role, ...name, content: message.text };
    default:
      throw new Error(`agui: chat message ${id} has role "${message.role}", which has no AG-UI equivalent`);
  }
}

type Block = Record<string, unknown>;

/**
 * User or tool content → AG-UI content. A string stays a string, and so does an array of text blocks (joined, as
 * LangChain's `.text` joins them). Images (`image_url`, or standard `image` blocks with a url or base64 data) become
 * image parts; any other block type throws, because silently dropping what a person or tool sent is worse.
 */
export function toAguiContent(content: MessageContent): string | ContentPart[] {
  if (typeof content === "string") return content;
  const parts = (content as Block[]).map(toPart);
  if (parts.every((part) => part.type === "text")) {
    return parts.map((part) => (part.type === "text" ? part.text : "")).join("");
  }
  return parts;
}

function toPart(block: Block): ContentPart {
  if (block.type === "text" && typeof block.text === "string") return { type: "text", text: block.text };
  if (block.type === "image_url") {
    const ref = block.image_url;
    const url = typeof ref === "string" ? ref : (ref as { url?: unknown } | undefined)?.url;
    if (typeof url === "string") return { type: "image", source: sourceFromUrl(url) };
  }
  if (block.type === "image") {
    const mimeType = (block.mimeType ?? block.mime_type) as string | undefined;
    const data = block.data ?? block.base64;
    if (typeof block.url === "string") return { type: "image", source: sourceFromUrl(block.url, mimeType) };
    if (typeof data === "string" && mimeType) {
      return { type: "image", source: { type: "data", value: data, mimeType } };
    }
  }
  throw new Error(`agui: content block of type "${String(block.type)}" has no AG-UI content part mapping`);
}

function sourceFromUrl(url: string, mimeType?: string): PartSource {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (inline) return { type: "data", mimeType: inline[1] ?? "", value: inline[2] ?? "" };
  return { type: "url", value: url, ...(mimeType ? { mimeType } : {}) };
}
