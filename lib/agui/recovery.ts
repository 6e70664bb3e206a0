import { EventType } from "@ag-ui/core";
import type { AguiEvent } from "./events";

/**
 * What a run left open when its process died: the events that close it, in a valid order (text and tool calls
 * inside their steps first, then the steps, innermost last-opened first). A recovered run emits these before it
 * continues, so the thread's event log stays a sequence AG-UI's verifier accepts: the re-run node opens its step
 * again instead of opening it twice. Pure: derived from the run's logged events only.
 */
export function closeOpenEvents(logged: readonly AguiEvent[], now: number = Date.now()): AguiEvent[] {
  const steps: string[] = [];
  const texts = new Set<string>();
  const tools = new Set<string>();
  for (const event of logged) {
    switch (event.type) {
      case "STEP_STARTED":
        steps.push(event.stepName);
        break;
      case "STEP_FINISHED": {
        const i = steps.lastIndexOf(event.stepName);
        if (i >= 0) steps.splice(i, 1);
        break;
      }
      case "TEXT_MESSAGE_START":
        texts.add(event.messageId);
        break;
      case "TEXT_MESSAGE_END":
        texts.delete(event.messageId);
        break;
      case "TOOL_CALL_START":
        tools.add(event.toolCallId);
        break;
      case "TOOL_CALL_END":
        tools.delete(event.toolCallId);
        break;
      default:
        break;
    }
  }
  const timestamp = Math.trunc(now);
  return [
    ...[...texts].map((messageId): AguiEvent => ({ type: EventType.TEXT_MESSAGE_END, messageId, timestamp })),
    ...[...tools].map((toolCallId): AguiEvent => ({ type: EventType.TOOL_CALL_END, toolCallId, timestamp })),
    ...[...steps]
      .reverse()
      .map((stepName): AguiEvent => ({ type: EventType.STEP_FINISHED, stepName, timestamp })),
  ];
}

/** True when the logged events of a run already opened it (RUN_STARTED made it to the log before the crash). */
export function runWasStarted(logged: readonly AguiEvent[]): boolean {
  return logged.some((e) => e.type === "RUN_STARTED");
}
