import "server-only";
import { EventType } from "@ag-ui/core";
import {
  type AguiEvent,
  closeOpenEvents,
  createAguiMapper,
  finishInputFromState,
  RUN_RECOVERED_EVENT,
  requireId,
  runWasStarted,
} from "@/lib/agui";
import { forgetRunHead } from "@/lib/checkpoint/run-head";
import { batcherFor } from "@/lib/checkpoint/write-batch";
import { AppError, appErrorOf, errorCodeOf, toAppError } from "@/lib/contract/errors";
import { DECISIONS_RECORDED_EVENT, type RecordedDecision } from "@/lib/contract/wire";
import type { Database } from "@/lib/db/client";
import { readRunEvents } from "@/lib/db/queries/events";
import { releaseRuns, resetRunAttempts } from "@/lib/db/queries/runs";
import type { Run } from "@/lib/db/schema";
import { databaseFault, isDatabaseUnavailable, retryingDatabaseFaults } from "@/lib/platform/database-faults";
import { env } from "@/lib/platform/env";
import { errorFields, logger, runFields } from "@/lib/platform/observability/logger";
import type { RunTraceHandler } from "@/lib/runtime/runs/graph-callbacks";
import { observeRunEnd } from "@/lib/runtime/runs/runs";
import { type AgentDefinition, findAgentForKey, getAgentGraph, interruptDescriber } from "../agents/registry";
import { refuseChangedQuestions } from "./asked-again";
import { BudgetGate, loadThreadSpending, type StartRead } from "./budget";
import {
  isCancelReason,
  isModelTimeout,
  isTimeoutReason,
  MODEL_TIMED_OUT,
  RUN_CANCELLED,
  RUN_TIMED_OUT,
  stoppedMessage,
} from "./cancel-reason";
import { EventSink } from "./event-sink";
import { finalizeRun } from "./finalize";
import { isLostOwnership, LostOwnershipError, RunHandedOverError } from "./ownership";
import { graphInputFor } from "./run-graph-input";
import type { RunInput } from "./run-input";
import { armLimits } from "./run-limits";

/*
 * One execution of a claimed run (./executor.ts starts them in the background): its opening events, its limits, its
 * graph streamed step by step into the event log, and its end — paused at its questions, completed, stopped or failed.
 */

const STREAM_MODES = ["messages", "tasks", "custom"] as const;

export interface StartOptions {
  /** The run was taken over from a dead owner: continue from its last checkpoint instead of starting it. */
  recovered?: boolean;
  /** Events to emit right after RUN_STARTED (e.g. a fork's side-effect warnings). */
  preamble?: AguiEvent[];
  /** What the run's start reads of its thread, when the claim's statement already read it: not read again. */
  startRead?: StartRead;
}

/** One execution of a claimed run: what its steps share. */
interface Execution {
  run: Run;
  database: Database;
  owner: string;
  abort: AbortController;
  sink: EventSink;
  mapper: ReturnType<typeof createAguiMapper>;
  /** The agent version the run executes, or undefined when this process lacks it (the run then fails loudly). */
  agent: AgentDefinition | undefined;
  /** Emit the run's opening events, once (with its first step's, or with whatever ends it first). */
  open(): void;
  /** The run's spending limits, once its graph starts. */
  gate?: BudgetGate;
}

/**
 * Execute a claimed run: open it, arm its limits, stream its graph to the end, and end it — succeeded or paused at
 * its questions, stopped (an operator, its time limit, a model that did not answer), or failed with a code.
 */
export async function executeRun(
  database: Database,
  run: Run,
  startSeq: number,
  abort: AbortController,
  options: StartOptions,
  trace: RunTraceHandler,
): Promise<{ inputWaiting: boolean | undefined } | undefined> {
  const execution = await beginExecution(database, run, startSeq, abort, options);
  const limit = armLimits(run, abort);
  try {
    abort.signal.throwIfAborted();
    return await streamRun(execution, options, trace);
  } catch (error) {
    trace.closeAll();
    return await endAfterError(execution, error);
  } finally {
    clearTimeout(limit);
  }
}

/** A resume run's opening word: the decisions it carries (the page's decision history moves with it). */
function decisionsRecorded(run: Run): AguiEvent[] {
  const input = run.input as RunInput | null;
  if (input?.kind !== "resume" || input.resume.length === 0) return [];
  const value: RecordedDecision[] = input.resume.map((r) => ({
    interruptId: r.interruptId,
    status: r.status,
    answer: r.status === "resolved" ? (r.payload ?? null) : null,
    by: r.by ?? null,
    at: r.at ?? null,
  }));
  return [{ type: EventType.CUSTOM, name: DECISIONS_RECORDED_EVENT, value }];
}

/**
 * The run's event sink and AG-UI mapper, and its opening events: RUN_STARTED (and a fork's preamble), or — for a run
 * taken over from a dead owner — what closes the events it left open and says the run was recovered.
 */
async function beginExecution(
  database: Database,
  run: Run,
  startSeq: number,
  abort: AbortController,
  options: StartOptions,
): Promise<Execution> {
  const owner = run.owner ?? "";
  // Nothing kept of an earlier execution of this run (one handed over mid-step in this process) may end this one.
  forgetRunHead(run.threadId);
  // An event write that finds the run owned elsewhere stops the graph there and then, not at the next heartbeat: an
  // execution that lost its run must not go on writing checkpoints beside the new owner's.
  // Events go out with the checkpointer's writes (one statement per step when they meet).
  const sink = new EventSink(
    database.db,
    run.threadId,
    run.id,
    owner,
    startSeq,
    (lost) => abort.abort(lost),
    database.checkpointSql,
  );
  // Claims and the sweeper only hand this process runs of versions it has; if that ever fails, end the run loudly.
  const agent = findAgentForKey(run.agentKey);
  const mapper = createAguiMapper({
    threadId: run.threadId,
    runId: run.id,
    ...(agent ? { describeInterrupt: interruptDescriber(agent) } : {}),
  });
  const started = mapper.start();
  // The run's opening events go out with its first step's (one write instead of one of their own while the graph
  // reads its checkpoint), or with whatever ends the run first: nothing is emitted before them.
  let opening: AguiEvent[] | null;
  if (options.recovered) {
    // Pick up where the dead owner stopped: close what it left open, say so, and do not open the run twice.
    const logged = (await readRunEvents({ db: database.db, threadId: run.threadId, runId: run.id })).map(
      (e) => e.event as unknown as AguiEvent,
    );
    opening = [
      ...(runWasStarted(logged) ? [] : [...started, ...decisionsRecorded(run)]),
      ...closeOpenEvents(logged),
      { type: EventType.CUSTOM, name: RUN_RECOVERED_EVENT, value: { attempt: run.attempts } },
    ];
  } else {
    opening = [...started, ...decisionsRecorded(run), ...(options.preamble ?? [])];
  }
  const open = () => {
    if (opening) sink.emit(opening);
    opening = null;
  };
  return { run, database, owner, abort, sink, mapper, agent, open };
}

/** Stream the run's graph to its end, mapping every item to AG-UI events, and record how it ended. */
async function streamRun(
  x: Execution,
  options: StartOptions,
  trace: RunTraceHandler,
): Promise<{ inputWaiting: boolean | undefined }> {
  const { run, database, agent } = x;
  if (!agent) {
    throw new AppError(
      "conflict:graph_version",
      `This server does not have ${run.agentKey}: the run cannot execute here.`,
    );
  }
  const graph = await getAgentGraph(agent);
  // Its spending limits: a model call past one pauses the run with a `run_budget` question (lib/runtime/runs/budget.ts).
  // The same statement reads what the graph's input needs of the thread: the questions asked (a resume), the
  // ticket (a new message).
  const kind = (run.input as RunInput).kind;
  const spending =
    options.startRead ??
    (await loadThreadSpending({
      db: database.db,
      threadId: run.threadId,
      runId: run.id,
      asked: kind === "resume",
      thread: kind === "input",
    }));
  const { input, configurable } = await graphInputFor({
    db: database.db,
    run,
    agent,
    graph,
    recovered: options.recovered ?? false,
    known: spending,
  });
  // An answer goes only to the question it was given for, whatever the agent's kind (./asked-again.ts).
  if (input !== null)
    await refuseChangedQuestions({
      agent,
      database,
      run,
      ...(spending.askedIn ? { askedIn: spending.askedIn } : {}),
    });
  x.gate = new BudgetGate(spending, { retry: run.kind === "retry" });
  const stream = await graph.stream(input, {
    // Every checkpoint of the run records the agent version it ran under (the saver stamps it into metadata).
    configurable: {
      thread_id: run.threadId,
      ...configurable,
      agent_version: agent.version,
      hitl_run_id: run.id,
      // Its checkpoint writes are queued, not waited for one by one (they share statements); the end waits.
      defer_writes: !options.recovered,
    },
    streamMode: [...STREAM_MODES],
    // A recovered run writes every checkpoint before moving on: it already crashed once.
    durability: options.recovered ? "sync" : "async",
    signal: x.abort.signal,
    // The spending limits first (nothing else hears of a call they hold back); spans and model metrics.
    callbacks: [x.gate, trace],
  });
  let progressed = !options.recovered;
  for await (const item of stream as AsyncIterable<[string, unknown]>) {
    x.open();
    x.sink.emit(x.mapper.push(item[0], item[1]));
    if (!progressed && item[0] === "tasks" && isTaskResult(item[1])) {
      progressed = true;
      await resetRunAttempts({ db: database.db, runId: run.id, owner: x.owner });
    }
  }
  x.open();
  await x.sink.drain();
  // Every checkpoint write of the run committed (a failed one fails the run here, as LangGraph's own await would).
  await batcherFor(database.checkpointSql).settled(run.threadId, true);
  return endAtHead(x, agent, graph);
}

/** The run reached its graph's end or its questions: recorded from the head it wrote, paused or completed. */
async function endAtHead(
  x: Execution,
  agent: AgentDefinition,
  graph: Awaited<ReturnType<typeof getAgentGraph>>,
): Promise<{ inputWaiting: boolean | undefined }> {
  const { run } = x;
  // The head as this run wrote it (kept by the saver, lib/checkpoint/run-head.ts): not read back.
  const state = await graph.getState({ configurable: { thread_id: run.threadId, hitl_head_of_run: run.id } });
  const final = finishInputFromState(state);
  // A pending interrupt without an id cannot be answered by id: fail loudly rather than pause forever.
  const interrupts = final.interrupts.map((i) => {
    const parsed = agent.interrupts.parse(i.value);
    return {
      id: requireId(i.id, "interrupt"),
      value: i.value,
      action: parsed.ok ? parsed.action : "unknown",
      summary: agent.interrupts.summarize(i.value),
    };
  });
  // Should the write that ends the run fail (a refused pending decision, a database fault), its events never reached
  // anyone: the run then ends with a RUN_ERROR numbered where they would have been (endAfterError).
  const mark = x.sink.mark();
  const ended = await finalizeRun({
    // A run that ends asking nothing while the ledger still waits for a decision did not do what was decided (its
    // graph no longer has the question): that is an error for a supervisor, never a success (checked as it closes).
    refuseIfPending: interrupts.length === 0 && run.kind !== "fork" && run.kind !== "migration",
    db: x.database.db,
    runId: run.id,
    threadId: run.threadId,
    owner: x.owner,
    status: interrupts.length > 0 ? "interrupted" : "succeeded",
    threadStatus: interrupts.length > 0 ? "interrupted" : "completed",
    interrupts,
    context: agent.context(final.values),
    checkpointId: (state.config.configurable?.checkpoint_id as string | undefined) ?? null,
    events: x.sink.number(x.mapper.finish(final)),
    tokens: x.gate?.tokens() ?? { in: 0, out: 0 },
  }).catch((error: unknown) => {
    x.sink.rewind(mark);
    x.mapper.finishNotWritten();
    throw error;
  });
  observeRunEnd(run, interrupts.length > 0 ? "interrupted" : "succeeded");
  return ended;
}

/** How a run that did not reach its end stopped, when it was stopped rather than failed (null: it failed). */
function stopOf(
  error: unknown,
  signal: AbortSignal,
): { status: "cancelled" | "timed_out"; code: string; message: string } | null {
  // An operator's "stop" answer to a spending limit ends the run the same way, raised by the gate in its node.
  const budgetStop = !signal.aborted && errorCodeOf(error) === RUN_CANCELLED ? appErrorOf(error) : undefined;
  if (budgetStop) return { status: "cancelled", code: RUN_CANCELLED, message: budgetStop.message };
  if (isCancelReason(signal.reason))
    return { status: "cancelled", code: RUN_CANCELLED, message: stoppedMessage(signal.reason.by) };
  if (isTimeoutReason(signal.reason)) {
    return {
      status: "timed_out",
      code: RUN_TIMED_OUT,
      message: `The run took longer than its limit of ${Math.round(signal.reason.limitMs / 1000)} s and was stopped at its last saved step.`,
    };
  }
  if (!signal.aborted && isModelTimeout(error)) {
    return {
      status: "timed_out",
      code: MODEL_TIMED_OUT,
      message: `The model did not answer within ${Math.round(env.MODEL_TIMEOUT_MS / 1000)} s, retries included; the run stopped at its last saved step.`,
    };
  }
  return null;
}

/**
 * The run did not reach its end. Its queued checkpoint writes land (or fail) first, so its thread stays at a step that
 * is stored; then it ends stopped (the graph aborted, the thread at its last checkpoint — a run without new input
 * continues it — and, for a deliberate stop, RUN_FINISHED with AG-UI's `cancelled` outcome, for a time limit a
 * RUN_ERROR, ending every open stream of it), lost (another owner has it: nothing more is written), or failed.
 */
async function endAfterError(
  x: Execution,
  error: unknown,
): Promise<{ inputWaiting: boolean | undefined } | undefined> {
  const { run, database, abort } = x;
  x.open();
  // A failure among the queued writes is consumed here (this run ends anyway), never left for the thread's next run.
  await batcherFor(database.checkpointSql)
    .settled(run.threadId, true)
    .catch(() => {});
  // The database went away or stopped answering mid-step: the run did not fail. Recovery continues it from its last
  // committed checkpoint (here or on another instance); nothing more is written by this execution.
  if (databaseFault(error) && !abort.signal.aborted) {
    await x.sink.drain().catch(() => {});
    handOver(database, run, x.owner, isDatabaseUnavailable(error));
    throw new RunHandedOverError(`database fault mid-step: ${databaseFault(error)?.reason}`, {
      cause: error,
    });
  }
  const stop = stopOf(error, abort.signal);
  const tokens = x.gate ? { tokens: x.gate.tokens() } : {};
  if (stop) {
    await x.sink.drain().catch(() => {});
    const ended = await finalizeRun({
      db: database.db,
      runId: run.id,
      threadId: run.threadId,
      owner: x.owner,
      status: stop.status,
      // Stopped on purpose: a neutral end (RUN_FINISHED, outcome `cancelled`); a time limit is a failure.
      threadStatus: stop.status === "cancelled" ? "stopped" : "failed",
      interrupts: [],
      checkpointId: null,
      error: { code: stop.code, message: stop.message },
      events: x.sink.number(
        stop.status === "cancelled"
          ? x.mapper.cancel({ code: stop.code, message: stop.message })
          : x.mapper.fail({ code: stop.code, message: stop.message }),
      ),
      ...tokens,
    });
    observeRunEnd(run, stop.status, stop.code);
    return ended;
  }
  if (isLostOwnership(error) || abort.signal.aborted) throw new LostOwnershipError(String(error));
  await x.sink.drain().catch(() => {});
  const attention = errorCodeOf(error)?.startsWith("conflict:") === true;
  await failRun({
    db: database.db,
    run,
    owner: x.owner,
    sink: x.sink,
    fail: x.mapper.fail.bind(x.mapper),
    error,
    ...tokens,
    ...(attention ? { threadStatus: "needs_attention" as const } : {}),
  });
  return undefined;
}

/**
 * Release a run whose execution stopped on a database fault, as soon as the database takes the write (retried with
 * back-off): every instance's sweeper then takes it over at once. Until then — or if the database stays away longer
 * than the lease — its lease simply runs out (the heartbeat extends only runs executing here), with the same result.
 */
function handOver(database: Database, run: Run, owner: string, unavailable: boolean): void {
  // A database that was away (not a slow statement, which a step can meet every time) is no crash of the run: its
  // claim is not counted against MAX_RUN_ATTEMPTS, so an outage of any length never abandons a run.
  void retryingDatabaseFaults(
    () => releaseRuns({ db: database.db, owner, runId: run.id, uncount: unavailable }),
    { withinMs: env.RUN_LEASE_MS },
  ).catch(() => {});
}

/** End a run as failed with a RUN_ERROR carrying a stable code. */
export async function failRun({
  db,
  run,
  owner,
  sink,
  fail,
  error,
  threadStatus = "failed",
  tokens,
}: {
  db: Database["db"];
  run: Run;
  owner: string;
  sink: EventSink;
  /** The RUN_ERROR (and whatever closes first) for this error. */
  fail: (e: { code: string; message: string }) => AguiEvent[];
  error: unknown;
  /** `failed` (the default: "Try again" continues it) or `needs_attention` (a supervisor must act). */
  threadStatus?: "failed" | "needs_attention";
  /** Model tokens the execution spent. */
  tokens?: { in: number; out: number };
}): Promise<void> {
  // An unexpected error is logged here, as a structured line of the run (the client gets a generic message).
  const appError = toAppError(error, () =>
    logger().error({ ...runFields(run), ...errorFields(error) }, "run error"),
  );
  const code = appError.code === "internal:unexpected" ? "internal:run_failed" : appError.code;
  await finalizeRun({
    db,
    runId: run.id,
    threadId: run.threadId,
    owner,
    status: "failed",
    threadStatus,
    interrupts: [],
    checkpointId: null,
    error: { code, message: appError.message },
    events: sink.number(fail({ code, message: appError.message })),
    ...(tokens ? { tokens } : {}),
  });
  observeRunEnd(run, "failed", code);
}

/** A `tasks`-mode item that reports a finished task (it has a result), as opposed to a task start. */
function isTaskResult(item: unknown): boolean {
  return typeof item === "object" && item !== null && "result" in item;
}
