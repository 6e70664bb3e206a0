import "server-only";
import type { DescribeInterrupt } from "@/lib/agui";
import { TracedCheckpointSaver } from "@/lib/checkpoint/traced-sql";
import { AppError } from "@/lib/contract/errors";
import type { MultitaskStrategy } from "@/lib/contract/wire";
import { getDatabase } from "@/lib/db/client";
import { getThread } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";
import { singleton } from "@/lib/platform/singleton";
import type { AgentDefinition, AgentGraph } from "./agent-definition";
import { withRuntimeQuestions } from "./runtime-questions";
import { storedReader } from "./stored-reader";

export type * from "./agent-definition";

/*
 * The registry of agents, in one place: the app registers its agents at start (`lib/agents/index.ts`), every thread
 * names the agent it runs, and each agent version's graph is compiled once per process on the process's database and
 * checkpointer. What an agent brings is an `AgentDefinition` (./agent-definition.ts).
 */
/** An agent's double-texting strategy: the deployment's override (`MULTITASK`), else its declaration, else `reject`. */
export function multitaskOf(agent: Pick<AgentDefinition, "id" | "multitask">): MultitaskStrategy {
  return env.MULTITASK[agent.id] ?? agent.multitask ?? "reject";
}

/** The registered agent versions, by `agent@version` (process-wide: every bundle registers into and reads one). */
function registry(): Map<string, AgentDefinition> {
  return singleton("agents", () => new Map<string, AgentDefinition>());
}

/** An agent version this process will not run: what it declared and what its graph is. */
export interface RefusedVersion {
  agent: string;
  version: string;
  declared: string;
  actual: string;
  reason: string;
}

function refusedVersions(): Map<string, RefusedVersion> {
  return singleton("agents-refused", () => new Map<string, RefusedVersion>());
}

/**
 * Take a version out of service in this process (its declaration does not match its graph): it is no longer found,
 * current, or claimable, and registering it again (another bundle evaluating the agents) does not bring it back.
 */
export function refuseAgentVersion(refused: RefusedVersion): void {
  refusedVersions().set(`${refused.agent}@${refused.version}`, refused);
  registry().delete(`${refused.agent}@${refused.version}`);
}

/** The versions this process refused to serve (health reports them). */
export function listRefusedVersions(): RefusedVersion[] {
  return [...refusedVersions().values()];
}

/** `agent@version`, the key runs carry (an instance claims only runs whose key it has). */
export function agentKey(agent: Pick<AgentDefinition, "id" | "version">): string {
  return `${agent.id}@${agent.version}`;
}

/**
 * Register an agent version (idempotent). The highest registered version of an id is its current one: new threads
 * start on it; older registered versions keep running the threads pinned to them.
 */
export function registerAgent<P>(definition: AgentDefinition<P>): void {
  if (refusedVersions().has(agentKey(definition))) return;
  // The runtime only hands an agent payloads its own contract parsed: erasing P here is safe.
  registry().set(agentKey(definition), withRuntimeQuestions(definition) as unknown as AgentDefinition);
}

function versionsOf(id: string): AgentDefinition[] {
  return [...registry().values()]
    .filter((a) => a.id === id)
    .sort((a, b) => compareVersions(a.version, b.version));
}

/** Versions compare numerically part by part ("2" > "1.9", "10" > "9"). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The agent `id` at `version` (or its current version), or an error naming what is registered. */
export function getAgent(id: string, version?: string): AgentDefinition {
  const agent = version ? registry().get(`${id}@${version}`) : versionsOf(id).at(-1);
  if (!agent) {
    throw new Error(
      `agent ${id}${version ? `@${version}` : ""} is not registered (registered: ${[...registry().keys()].join(", ") || "none"})`,
    );
  }
  return agent;
}

/** The agent at that version, or undefined when this process does not have it. */
export function findAgent(id: string, version: string): AgentDefinition | undefined {
  return registry().get(`${id}@${version}`);
}

/** The current version of every registered agent, in registration order of their ids. */
export function listAgents(): AgentDefinition[] {
  const ids = [...new Set([...registry().values()].map((a) => a.id))];
  return ids.map((id) => getAgent(id));
}

/** Every registered `agent@version` key (the runs this process may claim). */
export function registeredAgentKeys(): string[] {
  return [...registry().keys()];
}

/** Whether an agent id is registered (validating input before it reaches `getAgent`). */
export function hasAgent(id: string): boolean {
  return versionsOf(id).length > 0;
}

/** The agent's contract as the AG-UI mapper reads interrupts: kind, headline and answer schema. */
export function interruptDescriber(agent: AgentDefinition): DescribeInterrupt {
  return (value) => {
    const parsed = agent.interrupts.parse(value);
    return parsed.ok
      ? {
          reason: parsed.action,
          message: parsed.title,
          responseSchema: agent.interrupts.responseSchema(parsed.payload),
        }
      : null;
  };
}

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
  const graphs = singleton("agent-graphs", () => new Map<string, Promise<AgentGraph>>());
  const key = agentKey(agent);
  let graph = graphs.get(key);
  if (!graph) {
    graph = (async () => {
      // Exception to issue 51 (listed in lib/database-handle.test.ts): a process-wide cache on the process's own pool.
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

/**
 * The agent whose questions and policy judge a decision on a thread: its pinned version; during a rolling upgrade
 * (the thread is pinned to a version newer than this process's current one, which another instance serves) the
 * current version here, since the answer is staged and the run is claimed only where the pinned version is served
 * (./claim.ts); an older, retired version is refused as {@link threadAgent} refuses it.
 */
export function decidingAgent(thread: Pick<Thread, "id" | "agentId" | "agentVersion">): AgentDefinition {
  const agent = findAgent(thread.agentId, thread.agentVersion);
  if (agent) return agent;
  if (hasAgent(thread.agentId)) {
    const current = getAgent(thread.agentId);
    if (compareVersions(thread.agentVersion, current.version) > 0 && !refusalOf(thread)) return current;
  }
  return threadAgent(thread);
}

/** Why this process refused the thread's version at start, or undefined when it did not. */
function refusalOf(thread: Pick<Thread, "agentId" | "agentVersion">): RefusedVersion | undefined {
  return listRefusedVersions().find((r) => r.agent === thread.agentId && r.version === thread.agentVersion);
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
 * The agent to READ a thread with: its pinned version; when that version is gone, the current one (the page and the
 * history still render; running it is refused by {@link threadAgent}); when this process serves no version of the
 * agent at all (refused at start, or not deployed), a reader of the thread as stored (./stored-reader.ts). Never
 * throws: a thread can always be read.
 */
export function readableAgent(thread: Pick<Thread, "agentId" | "agentVersion">): AgentDefinition {
  return (
    findAgent(thread.agentId, thread.agentVersion) ??
    (hasAgent(thread.agentId) ? getAgent(thread.agentId) : storedReader(thread.agentId, thread.agentVersion))
  );
}

/**
 * Why this process does not serve a thread's pinned version, in words with the fix, or null when it does: refused at
 * start (its graph is not what it declares) or not deployed.
 */
export function versionNotServed(
  thread: Pick<Thread, "agentId" | "agentVersion"> & { status?: Thread["status"] },
): string | null {
  if (findAgent(thread.agentId, thread.agentVersion)) return null;
  const refused = refusalOf(thread);
  const current = hasAgent(thread.agentId) ? getAgent(thread.agentId) : null;
  const migrates = Boolean(current?.migrations?.some((m) => m.from === thread.agentVersion));
  // A thread flagged while a migration is declared: the start-up migration tried and failed on it.
  const failed = migrates && thread.status === "needs_attention";
  const fix = failed
    ? `Version ${current?.version} declares a migration from it, and the migration to version ${current?.version} failed (the audit trail says why): a supervisor can retry it by continuing the thread on version ${current?.version}, or close it.`
    : migrates
      ? `Version ${current?.version} declares a migration from it: a supervisor can continue the thread on version ${current?.version}, or close it.`
      : `Deploy a build that serves ${thread.agentId} version ${thread.agentVersion} as it was (or bumps the version and declares a migration from ${thread.agentVersion}), or close the thread.`;
  if (refused) {
    return `This thread paused under ${thread.agentId} version ${thread.agentVersion}, which this server refused to run: its graph is not what version ${thread.agentVersion} declares (declared ${refused.declared}, built ${refused.actual}) — the code changed without a version bump. It can be read here, not run or decided. ${fix}`;
  }
  return `This thread paused under ${thread.agentId} version ${thread.agentVersion}, which this server does not run. It can be read here, not run or decided. ${fix}`;
}

/** The agent of a run's `agent@version` key, or undefined when this process does not have it. */
export function findAgentForKey(key: string): AgentDefinition | undefined {
  const at = key.lastIndexOf("@");
  return findAgent(key.slice(0, at), key.slice(at + 1));
}
