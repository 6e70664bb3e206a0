import type { BaseMessage } from "@langchain/core/messages";
import type { LangGraphInterrupt } from "./interrupts";
import { jsonSafe } from "./json";

/** What the mapper needs at the end of a run, read from `graph.getState(config)`. */
export interface AguiFinishInput {
  values: Record<string, unknown>;
  messages: readonly BaseMessage[];
  interrupts: readonly LangGraphInterrupt[];
}

/** The parts of LangGraph's `StateSnapshot` {@link finishInputFromState} reads. */
export interface StateSnapshotLike {
  values: unknown;
  tasks: readonly { interrupts?: readonly LangGraphInterrupt[] }[];
}

/**
 * `graph.getState(config)` → the argument of `mapper.finish()`. Pending interrupts come from `tasks[].interrupts`,
 * never from `next`: with two interrupts in one node, `next` is empty while the second one waits.
 */
export function finishInputFromState(state: StateSnapshotLike): AguiFinishInput {
  const values = (state.values ?? {}) as Record<string, unknown>;
  const messages = values.messages ?? [];
  if (!Array.isArray(messages)) throw new Error("agui: state.values.messages is not an array");
  return { values, messages, interrupts: state.tasks.flatMap((task) => task.interrupts ?? []) };
}

/**
 * The graph state as AG-UI `STATE_SNAPSHOT` carries it: every channel except `messages` (those travel in
 * `MESSAGES_SNAPSHOT`), made JSON-safe.
 */
export function stateSnapshot(values: Record<string, unknown>): Record<string, unknown> {
  const { messages: _messages, ...rest } = values;
  return (jsonSafe(rest) ?? {}) as Record<string, unknown>;
}
