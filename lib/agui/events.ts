import type { AGUIEvent } from "@ag-ui/core";

/** Any AG-UI 1.0 event this module emits: the closed union from `@ag-ui/core`. */
export type AguiEvent = AGUIEvent;

/** Stamps an event with the run's clock. Every event this module builds goes through one. */
export type Stamp = <E extends AguiEvent>(event: E) => E;

/** A stamp that sets `timestamp` (integer milliseconds) from the injected clock. */
export function createStamp(now: () => number): Stamp {
  return (event) => ({ ...event, timestamp: Math.trunc(now()) });
}

/**
 * The id LangChain gave a message or tool call, or a loud failure. We never invent ids: an AG-UI consumer ties
 * later events, snapshots and resumes to them, and an invented one would not survive a replay.
 */
export function requireId(id: string | undefined | null, what: string): string {
  if (typeof id !== "string" || id.length === 0) {
    throw new Error(`agui: ${what} has no id; LangChain must assign one before it reaches the AG-UI mapper`);
  }
  return id;
}

/**
 * The top-level LangGraph task a `messages`-mode item belongs to, read from its metadata
 * (`langgraph_checkpoint_ns` is `node:taskId`, nested as `parent:taskId|child:taskId2` inside subgraphs; only the
 * top-level task shows up in `tasks` mode, so that is the one we key on).
 */
export function taskIdOf(metadata: unknown): string | undefined {
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const meta = metadata as Record<string, unknown>;
  const ns = meta.langgraph_checkpoint_ns ?? meta.checkpoint_ns;
  if (typeof ns !== "string" || ns.length === 0) return undefined;
  const top = ns.split("|")[0] ?? "";
  const colon = top.lastIndexOf(":");
  return colon >= 0 ? top.slice(colon + 1) : undefined;
}
