import "server-only";
import { randomUUID } from "node:crypto";
import { EventType } from "@ag-ui/core";
import { createAguiMapper } from "@/lib/agui";
import { checkpointExists } from "@/lib/checkpoint/history";
import { AppError, appErrorOf } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { FORK_WARNING_EVENT } from "@/lib/contract/wire";
import { type AppDb, getDatabase } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { getActiveRun, getRun, insertRun, setRunInput } from "@/lib/db/queries/runs";
import {
  getThread,
  lockThread,
  restoreThreadAfterBranch,
  setThreadEditor,
  setThreadStatus,
  setThreadVersion,
} from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import type { Queryable, Tx } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";
import { parkRunSpan, runTraceOf, startRunSpan, takeRunSpan } from "@/lib/platform/observability/tracing";
import { instanceId } from "../../platform/instance";
import type { AgentDefinition, AgentGraph, SideEffectWarning } from "../agents/registry";
import { agentKey, getAgent, getAgentGraph, threadAgent } from "../agents/registry";
import { EventSink } from "./event-sink";
import { failRun, startRunInBackground } from "./executor";
import { finalizeRun } from "./finalize";
import type { AnswerDifferently, RunInput } from "./run-input";

export interface ForkRequest {
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

export interface ForkResult {
  runId: string;
  forkedFrom: string;
  /** The branch's first checkpoint, now the thread's head. */
  checkpointId: string;
  warnings: SideEffectWarning[];
  /** Where the branch's run streams from (reconnect endpoint with the seq to start after). */
  afterSeq: number;
}

/**
 * Branch a thread from one of its checkpoints (time travel): claim a fork run (no other run may be active), write
 * the branch's first checkpoint — a copy of the old one, with `values` applied as `asNode` when given — which makes
 * it the head, and run the graph from there in the background like any run. Pending decisions of the old head are
 * superseded when the branch's run ends. Warns when the branch may reach a recorded refund or email again.
 */
export async function forkThread(raw: ForkRequest): Promise<ForkResult> {
  const { db } = await getDatabase();
  const { agent, graph, request } = await prepareFork(db, raw);
  const edits = Boolean(request.values && Object.keys(request.values).length > 0);
  // Read before the branch's transaction opens: the graph reads through the process's database, not the transaction,
  // and on the embedded database (one connection) such a read inside the transaction waits on it for ever.
  const changes = request.values ? await diffAgainst(graph, request, request.values) : {};
  return startBranch({
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
  const { db } = await getDatabase();
  const { thread, request } = await prepareFork(db, raw);
  await assertBranchable({ db, thread, checkpointId: request.checkpointId });
}

/**
 * The fork's checks before anything is read under a lock: the thread (404), the agent it forks onto (a version gone:
 * 409), and the edits (422). Shared by the fork and its check.
 */
async function prepareFork<R extends Omit<ForkRequest, "by">>(
  db: AppDb,
  raw: R,
): Promise<{ thread: Thread; agent: AgentDefinition; graph: AgentGraph; request: R & CheckedValues }> {
  const thread = await getThread({ db, threadId: raw.threadId });
  if (!thread) throw new AppError("not_found:thread", `Thread ${raw.threadId} does not exist.`);
  // Onto the current version (a thread whose version is gone), or on the thread's own pinned version.
  const agent = raw.onto === "current" ? getAgent(thread.agentId) : threadAgent(thread);
  const graph = await getAgentGraph(agent);
  return { thread, agent, graph, request: checkEdits(agent, raw) };
}

/**
 * What a branch needs of its thread, read through `db` (the branch's transaction, under the thread's lock; the
 * check's plain handle): the checkpoint is one of this thread's (404 `not_found:checkpoint`, whichever thread it
 * belongs to, if any), the `precondition` holds, and no run is active (409 `conflict:run_active`).
 */
async function assertBranchable<D extends Queryable>({
  db,
  thread,
  checkpointId,
  precondition,
}: {
  db: D;
  thread: Thread;
  checkpointId: string;
  precondition?: (thread: Thread, db: D) => Promise<void>;
}): Promise<void> {
  const exists = await checkpointExists({ db, threadId: thread.id, checkpointId });
  if (!exists)
    throw new AppError("not_found:checkpoint", `Checkpoint ${checkpointId} is not in this thread.`);
  await precondition?.(thread, db);
  const active = await getActiveRun({ db, threadId: thread.id });
  if (active)
    throw new AppError("conflict:run_active", "A run is in progress on this thread.", { runId: active.id });
}

/** A branch to start: the fork of a person, or the move of a paused thread onto a newer version (a migration). */
export interface BranchRequest {
  agent: AgentDefinition;
  graph: AgentGraph;
  threadId: string;
  by: Principal;
  checkpointId: string;
  kind: "fork" | "migration";
  /** The state update of the branch's first checkpoint (already checked), applied as `asNode`. */
  values?: Record<string, unknown>;
  asNode?: string;
  /** Who edited state (four-eyes), when someone did. */
  editedBy: string | null;
  /**
   * The audit entry, given the version the thread ran under before. Synchronous on purpose: it runs inside the
   * branch's transaction, where a read through anything but that transaction would wait on it.
   */
  audit(fromVersion: string): { action: "fork" | "thread_migrated"; detail: Record<string, unknown> };
  /** Checked under the thread's lock before anything is written (throws to refuse). */
  precondition?(thread: Thread, tx: Tx): Promise<void>;
  /** Warn when the branch may reach a recorded side effect again (forks; a migration continues, it repeats nothing). */
  warn: boolean;
  /** The decision the branch answers otherwise, when it was made for that. */
  answerDifferently?: AnswerDifferently;
}

/**
 * Claim a branch run (no other run may be active), write the branch's first checkpoint from `checkpointId` — with
 * `values` applied as `asNode` — which makes it the head, and run the graph from there in the background.
 */
export async function startBranch(request: BranchRequest): Promise<ForkResult> {
  const { db } = await getDatabase();
  const { agent } = request;
  const runId = randomUUID();
  // The fork run's trace starts here; the executor continues it.
  const runSpan = startRunSpan("run", { "run.id": runId, "thread.id": request.threadId, "run.kind": "fork" });
  const { startSeq, before } = await db.transaction(async (tx) => {
    const thread = await lockThread({ tx, threadId: request.threadId });
    if (!thread) throw new AppError("not_found:thread", `Thread ${request.threadId} does not exist.`);
    await assertBranchable({
      db: tx,
      thread,
      checkpointId: request.checkpointId,
      ...(request.precondition ? { precondition: request.precondition } : {}),
    });
    const { action, detail } = request.audit(thread.agentVersion);
    const input: RunInput = {
      kind: request.kind,
      checkpointId: request.checkpointId,
      forkCheckpointId: "",
      ...pick(request),
    };
    await insertRun({
      db: tx,
      run: {
        id: runId,
        threadId: thread.id,
        kind: request.kind,
        input,
        fromCheckpointId: request.checkpointId,
        owner: instanceId(),
        startedBy: request.by.id,
        startedByLabel: request.by.label,
        editedState: request.editedBy !== null,
        agentKey: agentKey(agent),
        leaseMs: env.RUN_LEASE_MS,
        ...runTraceOf(runSpan),
      },
    });
    await setThreadStatus({ db: tx, threadId: thread.id, status: "running" });
    if (agent.version !== thread.agentVersion) {
      await setThreadVersion({ db: tx, threadId: thread.id, agentVersion: agent.version });
    }
    if (request.editedBy) await setThreadEditor({ db: tx, threadId: thread.id, editedBy: request.editedBy });
    await recordAudit({
      db: tx,
      entries: [
        {
          action,
          actor: request.by,
          threadId: thread.id,
          checkpointId: request.checkpointId,
          detail: { runId, ...detail },
        },
      ],
    });
    return {
      startSeq: thread.lastSeq,
      before: { status: thread.status, agentVersion: thread.agentVersion, lastEditedBy: thread.lastEditedBy },
    };
  });
  parkRunSpan(runId, runSpan);
  const progress = { written: false };
  try {
    return await branch(request, runId, startSeq, progress);
  } catch (raw) {
    takeRunSpan(runId)?.end();
    const error = branchError(raw);
    // The run was claimed but the branch could not be made: end it visibly rather than leave it to the sweeper.
    const run = await getRun({ db, runId });
    if (run) {
      const sink = new EventSink(db, run.threadId, run.id, run.owner ?? "", startSeq);
      const mapper = createAguiMapper({ threadId: run.threadId, runId });
      sink.emit(mapper.start());
      await sink.drain();
      if (progress.written) {
        await failRun({ db, run, owner: run.owner ?? "", sink, fail: mapper.fail.bind(mapper), error });
      } else {
        // Nothing of the branch was written: the thread stays as it was — its status, its version, its editor and
        // every decision it waits for (a cooling-off's timer keeps running). The attempt is a failed run, said.
        const code = appErrorOf(error)?.code ?? "internal:run_failed";
        const message = appErrorOf(error)?.message ?? "The branch could not be made.";
        await finalizeRun({
          db,
          runId: run.id,
          threadId: run.threadId,
          owner: run.owner ?? "",
          status: "failed",
          threadStatus: before.status === "running" ? "failed" : before.status,
          interrupts: [],
          checkpointId: null,
          error: { code, message },
          events: sink.number(mapper.fail({ code, message })),
        });
        await restoreThreadAfterBranch({
          db,
          threadId: run.threadId,
          agentVersion: before.agentVersion,
          lastEditedBy: before.lastEditedBy,
        });
      }
    }
    throw error;
  }
}

/**
 * What a branch that could not be made answers: LangGraph's "ambiguous update" (the checkpoint was written by steps
 * that ran in parallel, so an edit cannot say which one it continues as) is the caller's to fix — 409 with a code and
 * what to do; anything else as it is.
 */
function branchError(error: unknown): unknown {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  if (name === "InvalidUpdateError" && typeof message === "string" && /ambiguous update/i.test(message)) {
    return new AppError(
      "conflict:fork_ambiguous",
      "This checkpoint was written by steps that ran side by side (parallel reviews), so an edit made here cannot say which of them it continues as. Fork from a checkpoint before them, or after the thread moves on; nothing was changed.",
    );
  }
  return error;
}

async function branch(
  request: BranchRequest,
  runId: string,
  startSeq: number,
  progress: { written: boolean },
): Promise<ForkResult> {
  const { db } = await getDatabase();
  const { agent, graph } = request;
  // The branch's first checkpoint records the version the branch runs under (stamped into its metadata), and a
  // migration's its source.
  const source = {
    configurable: {
      thread_id: request.threadId,
      checkpoint_id: request.checkpointId,
      agent_version: agent.version,
      ...(request.kind === "migration" ? { checkpoint_source: "migration" } : {}),
    },
  };
  const warnings = request.warn
    ? await agent.effects({
        db,
        threadId: request.threadId,
        values: ((await graph.getState(source)).values ?? {}) as Record<string, unknown>,
      })
    : [];
  const edits =
    request.values && request.kind === "fork" && request.editedBy
      ? { ...request.values, ...agent.fork.markEdited(request.editedBy) }
      : request.values;
  const forked = await graph.updateState(source, edits, request.asNode);
  progress.written = true;
  const forkCheckpointId = forked.configurable?.checkpoint_id as string;
  const input: RunInput = {
    kind: request.kind,
    checkpointId: request.checkpointId,
    forkCheckpointId,
    ...pick(request),
  };
  const run = await setRunInput({ db, runId, input });
  if (!run) throw new Error(`${request.kind} run ${runId} vanished`);
  startRunInBackground(run, startSeq, {
    preamble:
      warnings.length > 0
        ? [
            {
              type: EventType.CUSTOM,
              name: FORK_WARNING_EVENT,
              value: { forkedFrom: request.checkpointId, warnings },
            },
          ]
        : [],
  });
  return {
    runId,
    forkedFrom: request.checkpointId,
    checkpointId: forkCheckpointId,
    warnings,
    afterSeq: startSeq,
  };
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

function pick(request: {
  values?: Record<string, unknown>;
  asNode?: string;
  answerDifferently?: AnswerDifferently;
}): {
  values?: Record<string, unknown>;
  asNode?: string;
  answerDifferently?: AnswerDifferently;
} {
  return {
    ...(request.values ? { values: request.values } : {}),
    ...(request.asNode ? { asNode: request.asNode } : {}),
    ...(request.answerDifferently ? { answerDifferently: request.answerDifferently } : {}),
  };
}
