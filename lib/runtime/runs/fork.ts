import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/client";
import { getThread } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import type { AgentDefinition, AgentGraph } from "../agents/registry";
import { getAgent, getAgentGraph, threadAgent } from "../agents/registry";
import { assertBranchable, type ForkResult, pick, startBranch } from "./branch";
import type { AnswerDifferently } from "./run-input";

export type { ForkResult };

export interface ForkRequest {
  /** The entry point's whole handle: a fork's run executes through the checkpoint pool too. */
  database: Database;
  threadId: string;
  /** Who forks: audited, and when they edit state they become the thread's last editor (four-eyes). */
  by: Principal;
  checkpointId: string;
  /** Raw edits: checked against the agent's editable fields before anything is written. */
  values?: unknown;
  asNode?: string;
  /** Branch onto the agent's current version (a thread pinned to a version that is gone). */
  onto?: "current";
  /** The branch answers this decision otherwise ("Answer differently"): recorded on its run for the thread page. */
  answerDifferently?: AnswerDifferently;
}

/**
 * Branch a thread from one of its checkpoints (time travel): claim a fork run (no other run may be active), write
 * the branch's first checkpoint — a copy of the old one, with `values` applied as `asNode` when given — which makes
 * it the head, and run the graph from there in the background like any run. Pending decisions of the old head are
 * superseded when the branch's run ends. Warns when the branch may reach a recorded refund or email again.
 */
export async function forkThread(raw: ForkRequest): Promise<ForkResult> {
  const { agent, graph, request } = await prepareFork(raw);
  const edits = Boolean(request.values && Object.keys(request.values).length > 0);
  // Read before the branch's transaction opens: the graph reads through the process's database, not the transaction,
  // and on the embedded database (one connection) such a read inside the transaction waits on it for ever.
  const changes = request.values ? await diffAgainst(graph, request, request.values) : {};
  return startBranch({
    database: raw.database,
    agent,
    graph,
    threadId: request.threadId,
    by: request.by,
    checkpointId: request.checkpointId,
    kind: "fork",
    ...pick(request),
    editedBy: edits ? request.by.id : null,
    audit: (from) => ({
      action: "fork",
      detail: {
        ...(request.asNode ? { asNode: request.asNode } : {}),
        changes,
        ...(agent.version !== from ? { version: { from, to: agent.version } } : {}),
        ...(request.answerDifferently ? { answersDifferently: request.answerDifferently.interruptId } : {}),
      },
    }),
    warn: true,
  });
}

/**
 * Check a fork as the fork would, writing nothing: the fork form asks while its fields are typed, so what it says is
 * the server's rule in the agent's words (422 `unprocessable:fork_values` with `issues` per field). Every refusal the
 * fork makes before it writes is made here by the same functions, in the same order — no such thread, edits it may
 * not make, a checkpoint that is not this thread's, a run in progress — so the two answers cannot drift apart. (The
 * fork makes the last two again under the thread's lock; between the check and the fork, either may change.)
 */
export async function checkFork(raw: Omit<ForkRequest, "by">): Promise<void> {
  const { thread, request } = await prepareFork(raw);
  await assertBranchable({ db: raw.database.db, thread, checkpointId: request.checkpointId });
}

/**
 * The fork's checks before anything is read under a lock: the thread (404), the agent it forks onto (a version gone:
 * 409), and the edits (422). Shared by the fork and its check.
 */
async function prepareFork<R extends Omit<ForkRequest, "by">>(
  raw: R,
): Promise<{ thread: Thread; agent: AgentDefinition; graph: AgentGraph; request: R & CheckedValues }> {
  const thread = await getThread({ db: raw.database.db, threadId: raw.threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${raw.threadId} does not exist.`);
  // Onto the current version (a thread whose version is gone), or on the thread's own pinned version.
  const agent = raw.onto === "current" ? getAgent(thread.agentId) : threadAgent(thread);
  const graph = await getAgentGraph(agent);
  const request = checkEdits(agent, raw);
  await checkLimits(agent, graph, raw.database, request);
  return { thread, agent, graph, request };
}

/**
 * The edits against the state at the checkpoint and the world, as the agent says (`fork.limits`: an amount above the
 * order's total): 422 `unprocessable:fork_values` with each field's rule, as the editable schema's refusals are.
 */
async function checkLimits(
  agent: AgentDefinition,
  graph: AgentGraph,
  database: Database,
  request: Omit<ForkRequest, "by"> & CheckedValues,
): Promise<void> {
  if (!agent.fork.limits || !request.values) return;
  const state = await graph.getState({
    configurable: { thread_id: request.threadId, checkpoint_ns: "", checkpoint_id: request.checkpointId },
  });
  const issues = await agent.fork.limits({
    db: database.db,
    state: (state.values ?? {}) as Record<string, unknown>,
    values: request.values,
  });
  if (issues.length === 0) return;
  const fields = [...new Set(issues.map((i) => i.field))];
  throw new AppError(
    "unprocessable:fork_values",
    `These values go beyond what the thread allows: ${issues.map((i) => `${i.field} ${i.message}`).join("; ")}.`,
    { fields, editable: [...agent.fork.editableFields], issues },
  );
}

type CheckedValues = { values?: Record<string, unknown> };
type CheckedFork = Omit<ForkRequest, "values"> & CheckedValues;

/**
 * The edits a fork may make, or 422 naming the field: only the agent's editable fields with their types
 * (`AgentDefinition.fork.editable`), and `asNode` only one of the nodes a fork may continue as. Empty values are no
 * edit.
 */
function checkEdits<R extends Omit<ForkRequest, "by">>(
  agent: AgentDefinition,
  request: R,
): R & CheckedValues {
  const { asNodes, editable, editableFields } = agent.fork;
  if (request.asNode !== undefined && !asNodes.includes(request.asNode)) {
    throw new AppError(
      "unprocessable:fork_node",
      `A fork may continue as ${asNodes.join(" or ") || "no node"} only, not as ${String(request.asNode).slice(0, 60)}.`,
      { fields: ["asNode"], allowed: [...asNodes] },
    );
  }
  if (request.values === undefined) return { ...request, values: undefined };
  const parsed = editable.safeParse(request.values);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.flatMap((i) => issueFields(i)))];
    // Each field's rule in the agent's own words (its editable schema's messages): the fork form shows them as typed.
    const issues = parsed.error.issues.flatMap((i) =>
      issueFields(i).map((field) => ({
        field,
        message: i.code === "unrecognized_keys" ? "cannot be edited by a fork" : i.message,
      })),
    );
    throw new AppError(
      "unprocessable:fork_values",
      `These fields cannot be set this way: ${fields.join(", ")}. A fork may edit ${editableFields.join(", ")}; decisions are taken again by answering them.`,
      { fields, editable: [...editableFields], issues },
    );
  }
  const values = parsed.data as Record<string, unknown>;
  return { ...request, values: Object.keys(values).length > 0 ? values : undefined };
}

function issueFields(issue: { path: PropertyKey[]; code: string; keys?: string[] }): string[] {
  const prefix = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys" && issue.keys) {
    return issue.keys.map((k) => (prefix ? `${prefix}.${k}` : k).slice(0, 80));
  }
  return [prefix || "values"];
}

/** What the edits change, field by field, against the state at the checkpoint forked from (for the audit trail). */
async function diffAgainst(
  graph: AgentGraph,
  request: CheckedFork,
  values: Record<string, unknown>,
): Promise<Record<string, { from: unknown; to: unknown }>> {
  const state = await graph.getState({
    configurable: { thread_id: request.threadId, checkpoint_ns: "", checkpoint_id: request.checkpointId },
  });
  const before = (state.values ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(values).map(([key, to]) => [key, { from: before[key] ?? null, to }]),
  );
}
