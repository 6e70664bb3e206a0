import "server-only";
import { ReadOnlySaver } from "@/lib/checkpoint/read-only-saver";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { canonicalPayload } from "@/lib/contract/canonical-json";
import { AppError } from "@/lib/contract/errors";
import type { Database } from "@/lib/db/client";
import { listThreadDecisions } from "@/lib/db/queries/decisions";
import type { Decision } from "@/lib/db/schema";
import { currentBuild } from "@/lib/platform/build";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { singleton } from "@/lib/platform/singleton";
import type { AgentDefinition, AgentGraph } from "../agents/registry";
import { RUNTIME_QUESTIONS } from "../agents/runtime-questions";
import type { RunInput } from "./run-input";

/*
 * Is the question a resume answers the one the code would ask now? `askHuman` checks its own questions; this check
 * is the runtime's, so it holds for every agent kind alike — a LangChain `createAgent` reviewed by its middleware, an
 * agent-inbox graph raising a `HumanInterrupt`, a raw `interrupt()`. Before a resume is given to the graph, the
 * paused step is replayed on the thread's stored checkpoint through a saver that keeps nothing: the step runs up to
 * its `interrupt()` again, and the question it raises must carry the answered question's id and payload as the
 * ledger recorded them. Otherwise the run stops with `conflict:interrupt_changed` (the thread needs attention)
 * before the answer reaches any code. The replay runs the paused node's code before its question once more (as
 * LangGraph's own resume does), with no checkpoint written; a node that acts before it asks is already unsafe to
 * resume. Skipped for a thread paused by the runtime's own spending limit (its question is not the graph's), and for
 * questions this very production build asked (the ledger records each question's build): the same code asks the same.
 */

/** How long a replay may take before the check gives up (the run then goes on, as it would without the check). */
const REPLAY_MS = 15_000;

/** The agent version's graph on a saver that reads the real checkpoints and writes nothing (one per version). */
function replayGraph(agent: AgentDefinition, database: Database): AgentGraph {
  const graphs = singleton(
    "replay-graphs",
    () => new WeakMap<AgentDefinition, { database: Database; graph: AgentGraph }>(),
  );
  const cached = graphs.get(agent);
  if (cached?.database === database) return cached.graph;
  const checkpointer = new ReadOnlySaver(new DrizzleCheckpointSaver(database.checkpointSql));
  const graph = agent.build({ checkpointer, db: database.db });
  graphs.set(agent, { database, graph });
  return graph;
}

/** The questions the paused thread's code raises again, by interrupt id (nested graphs included). */
export async function askAgain(graph: AgentGraph, threadId: string): Promise<Map<string, unknown>> {
  const asked = new Map<string, unknown>();
  const stream = await graph.stream(null, {
    configurable: { thread_id: threadId },
    streamMode: "updates",
    subgraphs: true,
    signal: AbortSignal.timeout(REPLAY_MS),
  });
  for await (const item of stream as AsyncIterable<[string[], Record<string, unknown>]>) {
    const update = item[1];
    const raised = update?.__interrupt__ as { id?: string; value?: unknown }[] | undefined;
    for (const i of raised ?? []) if (i.id) asked.set(i.id, i.value);
  }
  return asked;
}

/**
 * Refuse a resume whose answered questions the current code no longer asks as recorded: 409-style
 * `conflict:interrupt_changed` naming them. A replay that fails or times out is logged and the run goes on.
 */
export async function refuseChangedQuestions({
  agent,
  database,
  run: { threadId, input },
  ledger,
  askedIn,
  build = currentBuild(),
}: {
  agent: AgentDefinition;
  database: Database;
  /** The run about to resume the thread (its input says which questions it answers). */
  run: { threadId: string; input: unknown };
  /** The thread's questions as the ledger recorded them (read when not given). */
  ledger?: Pick<Decision, "interruptId" | "action" | "payload" | "status" | "askedInBuild">[];
  /** The build that asked each question, by interrupt id, when the run's start read it already. */
  askedIn?: Record<string, string | null>;
  /** The production build this process serves (null: not known — then the step is always replayed). */
  build?: string | null;
}): Promise<void> {
  if ((input as RunInput).kind !== "resume") return;
  const answered = (input as Extract<RunInput, { kind: "resume" }>).resume
    .filter((r) => r.status === "resolved")
    .map((r) => r.interruptId);
  if (answered.length === 0) return;
  // Asked by this very build: the code that would ask again is the code that asked. Nothing to replay.
  if (build !== null && askedIn && answered.every((id) => askedIn[id] === build)) return;
  ledger ??= await listThreadDecisions({ db: database.db, threadId });
  if (
    build !== null &&
    answered.every((id) => ledger?.find((d) => d.interruptId === id)?.askedInBuild === build)
  )
    return;
  const runtime = RUNTIME_QUESTIONS as readonly string[];
  const recorded = new Map(ledger.map((d) => [d.interruptId, d]));
  // Paused by the runtime's spending limit (answered now or still open): the graph did not raise that question, and
  // replaying the step would make the model call the limit held back.
  const open = ledger.filter((d) => answered.includes(d.interruptId) || d.status === "pending");
  if (open.some((d) => runtime.includes(d.action))) return;
  let asked: Map<string, unknown>;
  try {
    asked = await askAgain(replayGraph(agent, database), threadId);
  } catch (error) {
    logger().warn({ threadId, ...errorFields(error) }, "resume check: the paused step could not be replayed");
    return;
  }
  const changed = answered.filter((id) => {
    const decision = recorded.get(id);
    if (!decision) return false;
    return !asked.has(id) || canonicalPayload(asked.get(id)) !== canonicalPayload(decision.payload);
  });
  if (changed.length === 0) return;
  throw new AppError(
    "conflict:interrupt_changed",
    "The question this answer is for is not the one the code asks now: the graph, its tools or its review settings changed since it was asked. Nothing after it ran; a supervisor must look at this thread.",
    { interruptIds: changed, actions: changed.map((id) => recorded.get(id)?.action ?? null) },
  );
}
