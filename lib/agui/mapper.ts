import { EventType, PROTOCOL_VERSION, type RunAgentInput } from "@ag-ui/core";
import { AIMessage, AIMessageChunk, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type AguiEvent, createStamp, taskIdOf } from "./events";
import { type DescribeInterrupt, toAguiInterrupt } from "./interrupts";
import { jsonSafe } from "./json";
import { createMessageStreams } from "./message-stream";
import { toAguiMessages } from "./messages";
import { type AguiFinishInput, stateSnapshot } from "./state";
import { createSteps, parseTaskChunk } from "./steps";

/** The run being mapped. `now` is the clock behind every event's `timestamp` (default `Date.now`). */
export interface AguiRunContext {
  threadId: string;
  runId: string;
  now?: () => number;
  /** The agent's reading of its interrupt values (reason, headline, answer schema); without it every one is "unknown". */
  describeInterrupt?: DescribeInterrupt;
}

/** Name of the `CUSTOM` event for a `custom`-mode item that is not already `{ name, value }`. */
export const LANGGRAPH_CUSTOM_EVENT = "langgraph.custom";

/** Maps one LangGraph run to AG-UI events. Pure: state lives in the closure, nothing is read or written outside. */
export interface AguiMapper {
  /** `RUN_STARTED` with our protocol version, echoing `input` when given (its thread and run must match). */
  start(input?: RunAgentInput): AguiEvent[];
  /**
   * One item of `graph.stream(…, { streamMode: ["messages", "updates", "tasks", "custom"] })` → zero or more events.
   * `tasks` → steps, `messages` → text / tool call streams and tool results, `custom` → `CUSTOM`, anything else
   * (`updates`, `values`, …) → nothing: the state travels once, as `STATE_SNAPSHOT`, at the end.
   */
  push(mode: string, chunk: unknown): AguiEvent[];
  /**
   * Closes whatever is open (text, tool calls, steps), then `MESSAGES_SNAPSHOT`, `STATE_SNAPSHOT` and `RUN_FINISHED`
   * with outcome `interrupt` (LangGraph's interrupt ids) when any are pending, else `success`. All or nothing: if a
   * message or interrupt cannot be mapped it throws before anything changes, and `fail()` can still end the run.
   */
  finish(final: AguiFinishInput): AguiEvent[];
  /**
   * `RUN_ERROR`. Open text messages, tool calls and steps are left open: AG-UI accepts `RUN_ERROR` at any point,
   * and a `TOOL_CALL_END` would claim arguments are complete when they may not be.
   */
  fail(error: { code: string; message: string }): AguiEvent[];
  /**
   * The run was stopped on purpose (an operator's Stop, a spending limit's "stop", newer input): not a failure. Closes
   * whatever is open, then `RUN_FINISHED` with AG-UI 1.0's `cancelled` outcome; who stopped it and why ride in the
   * event's `metadata.stop` (`{ code, message }`), for a console that says it.
   */
  cancel(stop: { code: string; message: string }): AguiEvent[];
  /**
   * `finish()`'s events never reached anyone (the write that carries them failed): the run is running again as far as
   * its events go, so `fail()` can end it. Only right after `finish()`.
   */
  finishNotWritten(): void;
}

/** Creates the mapper for one run. Events carry `timestamp`; add `metadata.seq` with `withSeq` when logging them. */
export function createAguiMapper(ctx: AguiRunContext): AguiMapper {
  const stamp = createStamp(ctx.now ?? Date.now);
  const steps = createSteps(stamp);
  const streams = createMessageStreams(stamp, steps.isDone);
  let phase: "new" | "running" | "finished" | "ended" = "new";

  const requirePhase = (wanted: "new" | "running" | "finished", call: string) => {
    if (phase !== wanted)
      throw new Error(`agui: ${call}() called while the run is ${phase === "finished" ? "ended" : phase}`);
  };

  const pushMessage = (chunk: unknown): AguiEvent[] => {
    const [message, metadata] = Array.isArray(chunk) ? chunk : [];
    if (!BaseMessage.isInstance(message))
      throw new Error('agui: "messages" stream item is not [message, metadata]');
    if (AIMessageChunk.isInstance(message)) return streams.chunk(message, taskIdOf(metadata));
    if (AIMessage.isInstance(message)) return streams.whole(message);
    if (ToolMessage.isInstance(message)) return streams.toolResult(message);
    // Human and system messages here are the run's own input echoed back; they reach the browser in the snapshot.
    return [];
  };

  const pushCustom = (chunk: unknown): AguiEvent[] => {
    const item = chunk as { name?: unknown; value?: unknown } | null;
    const named = typeof item === "object" && item !== null && typeof item.name === "string";
    const name = named ? (item.name as string) : LANGGRAPH_CUSTOM_EVENT;
    const value = jsonSafe(named ? item.value : chunk) ?? null;
    return [stamp({ type: EventType.CUSTOM, name, value })];
  };

  return {
    start(input) {
      requirePhase("new", "start");
      if (input && (input.threadId !== ctx.threadId || input.runId !== ctx.runId)) {
        throw new Error("agui: RunAgentInput belongs to another thread or run");
      }
      phase = "running";
      const { threadId, runId } = ctx;
      const parent = input?.parentRunId ? { parentRunId: input.parentRunId } : {};
      const echo = input ? { input } : {};
      return [
        stamp({
          type: EventType.RUN_STARTED,
          threadId,
          runId,
          protocolVersion: PROTOCOL_VERSION,
          ...parent,
          ...echo,
        }),
      ];
    },

    push(mode, chunk) {
      requirePhase("running", "push");
      switch (mode) {
        case "tasks": {
          const task = parseTaskChunk(chunk);
          if ("start" in task) return steps.start(task.start);
          return [...streams.closeTask(task.result.id), ...steps.finish(task.result)];
        }
        case "messages":
          return pushMessage(chunk);
        case "custom":
          return pushCustom(chunk);
        default:
          return [];
      }
    },

    finish(final) {
      requirePhase("running", "finish");
      const messages = toAguiMessages(final.messages);
      const interrupts = final.interrupts.map((i) => toAguiInterrupt(i, ctx.describeInterrupt));
      const snapshot = stateSnapshot(final.values);
      phase = "finished";
      const { threadId, runId } = ctx;
      const outcome =
        interrupts.length > 0 ? { type: "interrupt" as const, interrupts } : { type: "success" as const };
      return [
        ...streams.closeAll(),
        ...steps.closeAll(),
        stamp({ type: EventType.MESSAGES_SNAPSHOT, messages }),
        stamp({ type: EventType.STATE_SNAPSHOT, snapshot }),
        stamp({ type: EventType.RUN_FINISHED, threadId, runId, outcome }),
      ];
    },

    fail({ code, message }) {
      if (phase === "ended" || phase === "finished")
        throw new Error("agui: fail() called after the run ended");
      phase = "ended";
      return [stamp({ type: EventType.RUN_ERROR, message, code })];
    },

    cancel(stop) {
      if (phase === "ended" || phase === "finished")
        throw new Error("agui: cancel() called after the run ended");
      phase = "ended";
      const { threadId, runId } = ctx;
      return [
        ...streams.closeAll(),
        ...steps.closeAll(),
        stamp({
          type: EventType.RUN_FINISHED,
          threadId,
          runId,
          outcome: { type: "cancelled" as const },
          metadata: { stop: { code: stop.code, message: stop.message } },
        }),
      ];
    },

    finishNotWritten() {
      requirePhase("finished", "finishNotWritten");
      phase = "running";
    },
  };
}
