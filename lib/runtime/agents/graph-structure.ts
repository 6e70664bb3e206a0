import "server-only";
import { createHash } from "node:crypto";
import { MemorySaver } from "@langchain/langgraph";
import type { AppDb } from "@/lib/db/open";
import type { AgentDefinition } from "./registry";

/** What a graph is made of, as far as a paused thread cares: nodes, edges, interrupt points, state channels. */
export interface GraphStructure {
  nodes: string[];
  /** `from→to`, conditional edges marked `from?→to`. */
  edges: string[];
  interruptNodes: string[];
  channels: string[];
}

/** LangGraph's own description of a compiled graph (`getGraphAsync`): its nodes and edges. */
export interface DescribedGraph {
  nodes: Record<string, unknown>;
  edges: { source: string; target: string; conditional?: boolean }[];
}

interface Drawable {
  getGraphAsync?(config?: { xray?: boolean | number }): Promise<DescribedGraph>;
  channels?: Record<string, unknown>;
}

/**
 * An agent's compiled graph (built on a memory checkpointer; nothing runs) and LangGraph's description of it —
 * with `xray`, subgraphs opened up (their nodes named `subgraph:node`).
 */
export async function describeGraph(
  agent: AgentDefinition,
  options: { xray?: boolean } = {},
): Promise<{ graph: Drawable; described: DescribedGraph }> {
  const graph = agent.build({ checkpointer: new MemorySaver(), db: {} as AppDb }) as unknown as Drawable;
  if (!graph.getGraphAsync) throw new Error(`agent ${agent.id}: its graph cannot be drawn`);
  return { graph, described: await graph.getGraphAsync(options.xray ? { xray: true } : undefined) };
}

/** Read an agent's structure from its compiled graph. Sorted, so the same graph always reads the same. */
export async function graphStructure(agent: AgentDefinition): Promise<GraphStructure> {
  const { graph, described: drawn } = await describeGraph(agent);
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
