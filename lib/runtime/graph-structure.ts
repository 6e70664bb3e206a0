import "server-only";
import { createHash } from "node:crypto";
import { MemorySaver } from "@langchain/langgraph";
import type { AppDb } from "@/lib/db/open";
import type { AgentDefinition } from "./agent";

/** What a graph is made of, as far as a paused thread cares: nodes, edges, interrupt points, state channels. */
export interface GraphStructure {
  nodes: string[];
  /** `from→to`, conditional edges marked `from?→to`. */
  edges: string[];
  interruptNodes: string[];
  channels: string[];
}

interface Drawable {
  getGraphAsync?(): Promise<{
    nodes: Record<string, unknown>;
    edges: { source: string; target: string; conditional?: boolean }[];
  }>;
  channels?: Record<string, unknown>;
}

/**
 * Read an agent's structure from its compiled graph (built on a memory checkpointer; nothing runs). Sorted, so the
 * same graph always reads the same.
 */
export async function graphStructure(agent: AgentDefinition): Promise<GraphStructure> {
  const graph = agent.build({ checkpointer: new MemorySaver(), db: {} as AppDb }) as unknown as Drawable;
  if (!graph.getGraphAsync) throw new Error(`agent ${agent.id}: its graph cannot be drawn`);
  const drawn = await graph.getGraphAsync();
  return {
    nodes: Object.keys(drawn.nodes).sort(),
    edges: drawn.edges.map((e) => `${e.source}${e.conditional ? "?" : ""}→${e.target}`).sort(),
    interruptNodes: [...agent.interruptNodes].sort(),
    channels: Object.keys(graph.channels ?? {})
      .filter((c) => !c.startsWith("branch:") && !c.startsWith("__"))
      .sort(),
  };
}

/** `sha256:` of the structure's canonical JSON, first 16 hex characters (what an agent declares). */
export async function structureHash(agent: AgentDefinition): Promise<string> {
  const json = JSON.stringify(await graphStructure(agent));
  return `sha256:${createHash("sha256").update(json).digest("hex").slice(0, 16)}`;
}
