import { EventType } from "@ag-ui/core";
import type { AIMessage, AIMessageChunk, ToolCallChunk, ToolMessage } from "@langchain/core/messages";
import { type AguiEvent, requireId, type Stamp } from "./events";
import { toAguiContent, toolCallArguments } from "./messages";

/** A message whose text or tool calls are on the wire and not yet closed. */
interface OpenMessage {
  textOpen: boolean;
  toolCalls: Set<string>;
}

/** What we keep about every AI message we have put on the wire, open or closed. */
interface KnownMessage {
  taskId: string | undefined;
  /** Tool call id per `tool_call_chunks[].index`: continuation chunks carry only the index. */
  byIndex: Map<number, string>;
}

/** The `messages`-mode half of the mapper: streamed chunks, whole messages and tool results → AG-UI events. */
export interface MessageStreams {
  /** A streamed `AIMessageChunk`: opens its text / tool calls once, then appends deltas. */
  chunk(chunk: AIMessageChunk, taskId: string | undefined): AguiEvent[];
  /** A whole `AIMessage` emitted at node end: emitted complete, minus anything already streamed. */
  whole(message: AIMessage): AguiEvent[];
  /** A `ToolMessage`: closes the message holding the call, then `TOOL_CALL_RESULT`. */
  toolResult(message: ToolMessage): AguiEvent[];
  /** Closes every open message streamed by this task (the task finished). */
  closeTask(taskId: string): AguiEvent[];
  /** Closes everything still open (the run is ending). */
  closeAll(): AguiEvent[];
}

/**
 * Tracks streamed messages by id so nothing is emitted twice and everything opened is closed. `isTaskDone` covers a
 * race: LangChain may deliver callbacks in the background, so a chunk can arrive after its task's result. Such a
 * chunk is emitted already closed (START, deltas, END); AG-UI consumers append a re-opened message's content.
 */
export function createMessageStreams(stamp: Stamp, isTaskDone: (taskId: string) => boolean): MessageStreams {
  const known = new Map<string, KnownMessage>();
  const open = new Map<string, OpenMessage>();
  /** Message ids already on the wire: streamed or whole AI messages, and tool results. */
  const emitted = new Set<string>();
  /** Tool call id → its name (AG-UI needs the name on every START) and the message that holds it. */
  const toolCalls = new Map<string, { name: string; messageId: string }>();

  const close = (messageId: string): AguiEvent[] => {
    const state = open.get(messageId);
    if (!state) return [];
    open.delete(messageId);
    const events: AguiEvent[] = [];
    if (state.textOpen) events.push(stamp({ type: EventType.TEXT_MESSAGE_END, messageId }));
    for (const toolCallId of state.toolCalls)
      events.push(stamp({ type: EventType.TOOL_CALL_END, toolCallId }));
    return events;
  };

  const resolveToolCall = (part: ToolCallChunk, messageId: string, entry: KnownMessage): string => {
    if (part.id) {
      if (part.index !== undefined) entry.byIndex.set(part.index, part.id);
      return part.id;
    }
    // Deriving, not inventing: the provider named the call on its first chunk and continues it by index.
    const byIndex = part.index === undefined ? undefined : entry.byIndex.get(part.index);
    return requireId(byIndex, `tool call chunk (index ${String(part.index)}) of message ${messageId}`);
  };

  const toolCallStart = (toolCallId: string, name: string | undefined, messageId: string): AguiEvent => {
    const toolCallName = name || toolCalls.get(toolCallId)?.name;
    if (!toolCallName) throw new Error(`agui: tool call ${toolCallId} of message ${messageId} has no name`);
    toolCalls.set(toolCallId, { name: toolCallName, messageId });
    return stamp({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName, parentMessageId: messageId });
  };

  return {
    chunk(chunk, taskId) {
      const messageId = requireId(chunk.id, "AIMessageChunk");
      const entry = known.get(messageId) ?? { taskId, byIndex: new Map() };
      known.set(messageId, entry);
      emitted.add(messageId);
      const state = open.get(messageId) ?? { textOpen: false, toolCalls: new Set<string>() };
      open.set(messageId, state);
      const events: AguiEvent[] = [];
      const delta = chunk.text;
      if (delta) {
        if (!state.textOpen) {
          events.push(stamp({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" }));
          state.textOpen = true;
        }
        events.push(stamp({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta }));
      }
      for (const part of chunk.tool_call_chunks ?? []) {
        const toolCallId = resolveToolCall(part, messageId, entry);
        if (!state.toolCalls.has(toolCallId)) {
          events.push(toolCallStart(toolCallId, part.name, messageId));
          state.toolCalls.add(toolCallId);
        }
        if (part.args) events.push(stamp({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: part.args }));
      }
      if (entry.taskId !== undefined && isTaskDone(entry.taskId)) events.push(...close(messageId));
      else if (!state.textOpen && state.toolCalls.size === 0) open.delete(messageId);
      return events;
    },

    whole(message) {
      const messageId = requireId(message.id, "AIMessage");
      const events: AguiEvent[] = [];
      if (!emitted.has(messageId)) {
        emitted.add(messageId);
        const text = message.text;
        if (text) {
          events.push(
            stamp({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" }),
            stamp({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: text }),
            stamp({ type: EventType.TEXT_MESSAGE_END, messageId }),
          );
        }
      }
      for (const call of message.tool_calls ?? []) {
        const toolCallId = requireId(call.id, `tool call "${call.name}" of message ${messageId}`);
        if (toolCalls.has(toolCallId)) continue;
        events.push(toolCallStart(toolCallId, call.name, messageId));
        events.push(
          stamp({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: toolCallArguments(call.args) }),
        );
        events.push(stamp({ type: EventType.TOOL_CALL_END, toolCallId }));
      }
      return events;
    },

    toolResult(message) {
      const messageId = requireId(message.id, "ToolMessage");
      if (emitted.has(messageId)) return [];
      emitted.add(messageId);
      const toolCallId = requireId(message.tool_call_id, `tool_call_id of tool message ${messageId}`);
      // A tool runs on complete arguments, so the model message that asked for it has finished streaming.
      const holder = toolCalls.get(toolCallId)?.messageId;
      const events = holder === undefined ? [] : close(holder);
      const content = toAguiContent(message.content);
      events.push(stamp({ type: EventType.TOOL_CALL_RESULT, messageId, toolCallId, content, role: "tool" }));
      return events;
    },

    closeTask(taskId) {
      return [...open.keys()].filter((id) => known.get(id)?.taskId === taskId).flatMap(close);
    },

    closeAll() {
      return [...open.keys()].flatMap(close);
    },
  };
}
