import "server-only";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { getDatabase } from "@/lib/db/client";
import { getThread } from "@/lib/db/queries/threads";
import type { Queryable } from "@/lib/db/tx";
import { AppError } from "@/lib/errors";
import { type AgentDefinition, type AgentGraph, getAgent } from "./agent";

const KEY = Symbol.for("hitl-console.agent-graphs");
type G = typeof globalThis & { [KEY]?: Map<string, Promise<AgentGraph>> };

/** The compiled graph of an agent on the process's database and checkpointer (one per agent per process). */
export function getAgentGraph(agentId: string): Promise<AgentGraph> {
  const g = globalThis as G;
  g[KEY] ??= new Map();
  const graphs = g[KEY];
  let graph = graphs.get(agentId);
  if (!graph) {
    const agent = getAgent(agentId);
    graph = (async () => {
      const database = await getDatabase();
      return agent.build({
        checkpointer: new DrizzleCheckpointSaver(database.sql),
        db: database.db,
      });
    })().catch((error) => {
      graphs.delete(agentId);
      throw error;
    });
    graphs.set(agentId, graph);
  }
  return graph;
}

/** A thread's agent and its compiled graph (`not_found:thread` when there is no such thread). */
export async function agentOfThread({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<{ agent: AgentDefinition; graph: AgentGraph }> {
  const thread = await getThread({ db, threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  const agent = getAgent(thread.agentId);
  return { agent, graph: await getAgentGraph(agent.id) };
}
