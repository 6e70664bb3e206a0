import "server-only";
import { createHash } from "node:crypto";
import { MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import type { AppDb } from "@/lib/db/open";
import type { AgentDefinition } from "./registry";
import { RUNTIME_QUESTIONS } from "./runtime-questions";

/**
 * What a graph is made of, as far as a paused thread cares: nodes, edges, interrupt points, state channels, the
 * question kinds it asks, its tools (names and argument schemas) and its tool review settings.
 */
export interface GraphStructure {
  nodes: string[];
  /** `from→to`, conditional edges marked `from?→to`. */
  edges: string[];
  interruptNodes: string[];
  channels: string[];
  /** The question kinds the agent declares (the runtime's own, asked of every agent, left out). */
  questions: string[];
  /** `name:schema` of every tool a tool node of the graph runs, the schema as canonical JSON Schema. */
  tools: string[];
  /** `tool:settings` of every tool a review middleware stops for (see lib/agents/kit/reviewed-tools.ts). */
  review: string[];
}

/**
 * Where a review middleware keeps its settings for the hash (a registered symbol: the same in every chunk). LangChain's
 * own `humanInTheLoopMiddleware` closes over them; lib/agents/kit/reviewed-tools.ts attaches them.
 */
export const REVIEW_SETTINGS = Symbol.for("hitl-console.review-settings");

/** LangGraph's own description of a compiled graph (`getGraphAsync`): its nodes and edges. */
export interface DescribedGraph {
  nodes: Record<string, unknown>;
  edges: { source: string; target: string; conditional?: boolean }[];
}

interface Drawable {
  getGraphAsync?(config?: { xray?: boolean | number }): Promise<DescribedGraph>;
  channels?: Record<string, unknown>;
  nodes?: Record<string, { bound?: unknown }>;
}

interface BoundNode {
  tools?: { name?: string; schema?: unknown }[];
  middleware?: { name?: string; [REVIEW_SETTINGS]?: string[] };
}

/** A tool's argument schema as canonical JSON Schema (a zod schema converted; a JSON Schema as it is). */
function schemaText(schema: unknown): string {
  // A zod schema is known by its internals (never `instanceof`: chunks may hold two copies of zod).
  if (schema && typeof schema === "object" && "_zod" in schema) {
    return canonicalPayload(z.toJSONSchema(schema as z.ZodType));
  }
  return canonicalPayload(schema ?? null);
}

/** The tools and the review settings of a compiled graph's nodes. */
function toolsAndReview(graph: Drawable): { tools: string[]; review: string[] } {
  const tools: string[] = [];
  const review: string[] = [];
  for (const [name, node] of Object.entries(graph.nodes ?? {})) {
    const bound = node.bound as BoundNode | undefined;
    for (const tool of Array.isArray(bound?.tools) ? bound.tools : []) {
      tools.push(`${tool.name ?? "?"}:${schemaText(tool.schema)}`);
    }
    const middleware = bound?.middleware;
    if (middleware?.name === "HumanInTheLoopMiddleware") {
      const settings = middleware[REVIEW_SETTINGS];
      if (!settings) {
        throw new Error(
          `node ${name}: humanInTheLoopMiddleware hides its review settings from the structure hash; build it with reviewToolCalls (lib/agents/kit/reviewed-tools.ts)`,
        );
      }
      review.push(...settings);
    }
  }
  return { tools: [...new Set(tools)].sort(), review: [...new Set(review)].sort() };
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
    questions: agent.asks.filter((q) => !(RUNTIME_QUESTIONS as readonly string[]).includes(q)).sort(),
    ...toolsAndReview(graph),
  };
}

/** `sha256:` of the structure's canonical JSON, first 16 hex characters (what an agent declares). */
export async function structureHash(agent: AgentDefinition): Promise<string> {
  const json = JSON.stringify(await graphStructure(agent));
  return `sha256:${createHash("sha256").update(json).digest("hex").slice(0, 16)}`;
}
