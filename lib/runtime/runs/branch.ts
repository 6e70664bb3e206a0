import "server-only";
import { randomUUID } from "node:crypto";
import { EventType } from "@ag-ui/core";
import { createAguiMapper } from "@/lib/agui";
import { checkpointExists } from "@/lib/checkpoint/history";
import { AppError, appErrorOf } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { FORK_WARNING_EVENT } from "@/lib/contract/wire";
import type { AppDb, Database } from "@/lib/db/client";
import { recordAudit } from "@/lib/db/queries/audit";
import { getActiveRun, getRun, insertRun, setRunInput } from "@/lib/db/queries/runs";
import {
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
import { agentKey } from "../agents/registry";
import { EventSink } from "./event-sink";
import { failRun } from "./execute";
import { startRunInBackground } from "./executor";
import { finalizeRun } from "./finalize";
import type { AnswerDifferently, RunInput } from "./run-input";

/*
 * A branch of a thread: its first checkpoint written from an older one (with edits applied as a node), which makes it
 * the head, and a run from there. A person's fork (./fork.ts) and the move of a paused thread onto a newer version
 * (./migrate.ts) both start one here.
 */

export interface ForkResult {
  runId: string;
  forkedFrom: string;
  /** The branch's first checkpoint, now the thread's head. */
  checkpointId: string;
  warnings: SideEffectWarning[];
  /** Where the branch's run streams from (reconnect endpoint with the seq to start after). */
  afterSeq: number;
}

export /**
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
  /** The entry point's whole handle: the branch's run executes through the checkpoint pool too. */
  database: Database;
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
  const { db } = request.database;
  const runId = randomUUID();
  // The fork run's trace starts here; the executor continues it.
  const runSpan = startRunSpan("run", { "run.id": runId, "thread.id": request.threadId, "run.kind": "fork" });
  const { startSeq, before } = await db.transaction((tx) =>
    claimBranchRun(tx, request, runId, runTraceOf(runSpan)),
  );
  parkRunSpan(runId, runSpan);
  const progress = { written: false };
  try {
    return await branch(request, runId, startSeq, progress);
  } catch (raw) {
    takeRunSpan(runId)?.end();
    const error = branchError(raw);
    await endUnmadeBranch(db, runId, startSeq, progress.written, before, error);
    throw error;
  }
}

/** What the thread was before its branch was claimed (put back when the branch could not be made). */
interface BeforeBranch {
  status: Thread["status"];
  agentVersion: string;
  lastEditedBy: string | null;
}

/**
 * Under the thread's lock: check the branch may start (`assertBranchable`), insert its run, mark the thread running
 * (on the branch's version, edited by its editor) and audit it.
 */
async function claimBranchRun(
  tx: Tx,
  request: BranchRequest,
  runId: string,
  trace: ReturnType<typeof runTraceOf>,
): Promise<{ startSeq: number; before: BeforeBranch }> {
  const { agent } = request;
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
      ...trace,
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
}

/**
 * A branch that was claimed but could not be made ends visibly rather than being left to the sweeper. When its first
 * checkpoint was written, its run fails as any run does; when it was not, nothing of the branch exists: the thread
 * keeps its status, version, editor and every decision it waits for (a cooling-off's timer keeps running), and the
 * attempt is a failed run, said.
 */
async function endUnmadeBranch(
  db: AppDb,
  runId: string,
  startSeq: number,
  written: boolean,
  before: BeforeBranch,
  error: unknown,
): Promise<void> {
  const run = await getRun({ db, runId });
  if (!run) return;
  const sink = new EventSink(db, run.threadId, run.id, run.owner ?? "", startSeq);
  const mapper = createAguiMapper({ threadId: run.threadId, runId });
  sink.emit(mapper.start());
  await sink.drain();
  if (written) {
    await failRun({ db, run, owner: run.owner ?? "", sink, fail: mapper.fail.bind(mapper), error });
    return;
  }
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
  const { database, agent, graph } = request;
  const { db } = database;
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
  startRunInBackground({
    database,
    run,
    startSeq,
    options: {
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
    },
  });
  return {
    runId,
    forkedFrom: request.checkpointId,
    checkpointId: forkCheckpointId,
    warnings,
    afterSeq: startSeq,
  };
}

export function pick(request: {
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
