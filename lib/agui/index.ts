/*
 * Pure mapping from a LangGraph.js run to AG-UI 1.0 events, and back from AG-UI resume entries to a LangGraph
 * Command. No I/O: the run executor feeds it stream items and the final state, and writes the events it returns.
 */

// The console reacts to this event too: its name is part of the wire contract.
export { RUN_RECOVERED_EVENT } from "@/lib/contract/wire";
export { type AguiEvent, requireId } from "./events";
export {
  CANCELLED_RESUME,
  type DescribeInterrupt,
  type InterruptDescription,
  isCancelledResume,
  type LangGraphInterrupt,
  type ResumeCommand,
  resumeToCommand,
  toAguiInterrupt,
} from "./interrupts";
export { jsonSafe } from "./json";
export { type AguiMapper, type AguiRunContext, createAguiMapper, LANGGRAPH_CUSTOM_EVENT } from "./mapper";
export { toAguiContent, toAguiMessage, toAguiMessages } from "./messages";
export { closeOpenEvents, runWasStarted } from "./recovery";
export { encodeSse, withSeq } from "./sse";
export { type AguiFinishInput, finishInputFromState, type StateSnapshotLike, stateSnapshot } from "./state";
