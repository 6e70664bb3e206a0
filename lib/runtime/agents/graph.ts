import "server-only";
import { TracedCheckpointSaver } from "@/lib/checkpoint/traced-sql";
import { AppError } from "@/lib/contract/errors";
import { getDatabase } from "@/lib/db/client";
import { getThread } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import {
  type AgentDefinition,
  type AgentGraph,
  agentKey,
  compareVersions,
  findAgent,
  getAgent,
  hasAgent,
} from "./registry";

const KEY = Symbol.for("hitl-console.agent-graphs");
type G = typeof globalThis & { [KEY]?: Map<string, Promise<AgentGraph>> };

/**
 * Checkpoint metadata every run writes: the agent version it ran under, the run that wrote it (`run_id`: a rollback
 * marks a stopped run's checkpoints abandoned by it), and a migration's own `source`.
 */
export const CHECKPOINT_STAMP = {
  agent_version: "agent_version",
  hitl_run_id: "run_id",
  checkpoint_source: "source",
} as const;

/** The compiled graph of an agent version on the process's database and checkpointer (one per version per process). */
export function getAgentGraph(agent: AgentDefinition): Promise<AgentGraph> {
  const g = globalThis as G;
  g[KEY] ??= new Map();
  const graphs = g[KEY];
  const key = agentKey(agent);
  let graph = graphs.get(key);
  if (!graph) {
    graph = (async () => {
      const database = await getDatabase();
      return agent.build({
        // Saver calls are spans of the run's trace.
        // On its own pool (Postgres): a flood of checkpoint writes waits for its connections, not the pages' ones.
        checkpointer: new TracedCheckpointSaver(database.checkpointSql, undefined, CHECKPOINT_STAMP),
        db: database.db,
      });
    })().catch((error) => {
      graphs.delete(key);
      throw error;
    });
    graphs.set(key, graph);
  }
  return graph;
}

/**
 * The agent definition a thread runs under (its pinned version), or 409 `conflict:graph_version` when this process
 * does not have it: `details.newer` says whether the thread's version is newer than this process's current one (a
 * rolling upgrade: another instance has it) or older (retired without a migration: a supervisor must act).
 */
export function threadAgent(thread: Pick<Thread, "id" | "agentId" | "agentVersion">): AgentDefinition {
  const agent = findAgent(thread.agentId, thread.agentVersion);
  if (agent) return agent;
  const current = hasAgent(thread.agentId) ? getAgent(thread.agentId).version : null;
  const newer = current !== null && compareVersions(thread.agentVersion, current) > 0;
  throw new AppError(
    "conflict:graph_version",
    newer
      ? `This thread runs on ${thread.agentId} version ${thread.agentVersion}, which this server does not have yet.`
      : `This thread paused under ${thread.agentId} version ${thread.agentVersion}, which is no longer deployed, and no migration moves it to version ${current ?? "—"}.`,
    { agent: thread.agentId, threadVersion: thread.agentVersion, currentVersion: current, newer },
  );
}

/** A thread's agent and its compiled graph (`not_found:thread` when there is no such thread). */
export async function agentOfThread({
  db,
  threadId,
  read = false,
}: {
  db: Queryable;
  threadId: string;
  /** Only to read (history, checkpoints): fall back to the current version when the pinned one is gone. */
  read?: boolean;
}): Promise<{ agent: AgentDefinition; graph: AgentGraph }> {
  const thread = await getThread({ db, threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${threadId} does not exist.`);
  const agent = read ? readableAgent(thread) : threadAgent(thread);
  return { agent, graph: await getAgentGraph(agent) };
}

/**
 * The agent to READ a thread with: its pinned version, or — when that version is gone — the current one (the page
 * and the history still render; running it is refused by {@link threadAgent}).
 */
export function readableAgent(thread: Pick<Thread, "agentId" | "agentVersion">): AgentDefinition {
  return findAgent(thread.agentId, thread.agentVersion) ?? getAgent(thread.agentId);
}

/** The agent of a run's `agent@version` key, or undefined when this process does not have it. */
export function findAgentForKey(key: string): AgentDefinition | undefined {
  const at = key.lastIndexOf("@");
  return findAgent(key.slice(0, at), key.slice(at + 1));
}
