import { EventType } from "@ag-ui/core";
import type { AguiEvent, Stamp } from "./events";

/** A `tasks`-mode item when a task starts (LangGraph 1.x). */
export interface TaskStart {
  id: string;
  name: string;
  input: unknown;
  triggers?: string[];
}

/** A `tasks`-mode item when a task ends, normally or by raising interrupts (`result` is then `{}`). */
export interface TaskResult {
  id: string;
  name: string;
  result: unknown;
  interrupts?: unknown[];
  error?: unknown;
}

/** Reads a `tasks`-mode item; throws on a shape LangGraph does not produce, so a version drift fails loudly. */
export function parseTaskChunk(chunk: unknown): { start: TaskStart } | { result: TaskResult } {
  const item = chunk as Partial<TaskStart & TaskResult> | null;
  if (
    typeof item === "object" &&
    item !== null &&
    typeof item.id === "string" &&
    typeof item.name === "string"
  ) {
    if ("result" in item) return { result: item as TaskResult };
    if ("input" in item) return { start: item as TaskStart };
  }
  throw new Error(`agui: unexpected "tasks" stream item: ${JSON.stringify(chunk)?.slice(0, 200)}`);
}

/** The `tasks`-mode half of the mapper: LangGraph tasks → balanced `STEP_STARTED` / `STEP_FINISHED`. */
export interface Steps {
  start(task: TaskStart): AguiEvent[];
  finish(task: TaskResult): AguiEvent[];
  /** Whether this task's result has been seen (late `messages` items from it are emitted closed). */
  isDone(taskId: string): boolean;
  /** Finishes every step still open (the run is ending). */
  closeAll(): AguiEvent[];
}

/**
 * A step is a node name. AG-UI's verifier rejects a second `STEP_STARTED` for a name that is already open, and
 * LangGraph can run several tasks of one node at once (`Send` fan-out), so steps are reference-counted by task:
 * the first task of a name opens the step, the last one to finish closes it. Internal tasks (`__start__`, …) are
 * not steps. A task that never reports a result (one whose writes LangGraph replays from the checkpoint on resume)
 * keeps its step open until {@link Steps.closeAll}.
 */
export function createSteps(stamp: Stamp): Steps {
  const running = new Map<string, string>();
  const openCount = new Map<string, number>();
  const done = new Set<string>();

  return {
    start({ id, name }) {
      if (name.startsWith("__") || running.has(id) || done.has(id)) return [];
      running.set(id, name);
      const count = openCount.get(name) ?? 0;
      openCount.set(name, count + 1);
      return count === 0 ? [stamp({ type: EventType.STEP_STARTED, stepName: name })] : [];
    },

    finish({ id }) {
      done.add(id);
      const name = running.get(id);
      if (name === undefined) return [];
      running.delete(id);
      const count = (openCount.get(name) ?? 1) - 1;
      if (count > 0) {
        openCount.set(name, count);
        return [];
      }
      openCount.delete(name);
      return [stamp({ type: EventType.STEP_FINISHED, stepName: name })];
    },

    isDone: (taskId) => done.has(taskId),

    closeAll() {
      const names = [...openCount.keys()];
      running.clear();
      openCount.clear();
      return names.map((stepName) => stamp({ type: EventType.STEP_FINISHED, stepName }));
    },
  };
}
