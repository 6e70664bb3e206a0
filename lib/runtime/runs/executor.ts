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
import { batcherFor } from "@/lib/checkpoint/write-batch";
import { AppError, appErrorOf, errorCodeOf, toAppError } from "@/lib/contract/errors";
import { getDatabase } from "@/lib/db/client";
import { readRunEvents } from "@/lib/db/queries/events";
import { resetRunAttempts } from "@/lib/db/queries/runs";
import type { Run } from "@/lib/db/schema";
import { env } from "@/lib/platform/env";
import { errorFields, logger, runFields } from "@/lib/platform/observability/logger";
import { remoteParent, startRunSpan, takeRunSpan, withRunSpan } from "@/lib/platform/observability/tracing";
import { peekSingleton, setSingleton, singleton } from "@/lib/platform/singleton";
import { RunTraceHandler } from "@/lib/runtime/runs/graph-callbacks";
import { observeRunEnd, observeRunStart, observeRunStopped } from "@/lib/runtime/runs/runs";
import { findAgentForKey, getAgentGraph, interruptDescriber, multitaskOf } from "../agents/registry";
import { BudgetGate, loadThreadSpending, type StartRead } from "./budget";
import {
  cancelReason,
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
import { isLostOwnership, LostOwnershipError } from "./ownership";
import { graphInputFor } from "./run-graph-input";
import type { RunInput } from "./run-input";

const STREAM_MODES = ["messages", "tasks", "custom"] as const;

interface ActiveRun {
  done: Promise<void>;
  abort: AbortController;
}

/** Runs executing in this process, by id: the heartbeat extends their leases and aborts the ones taken over. */
export function activeRuns(): Map<string, ActiveRun> {
  return singleton("active-runs", () => new Map<string, ActiveRun>());
}

/** Told the thread of every run this process executed once it ended, however it ended (set at the server's start). */
const ENDED = "run-ended-listener";
/** `inputWaiting`: whether input waits in the thread's queue, when the run's end said so (undefined: not known). */
type RunEndedListener = (threadId: string, inputWaiting?: boolean) => void;
function runEndListener(): RunEndedListener | undefined {
  return peekSingleton<RunEndedListener>(ENDED);
}
export function onRunEnded(listener: RunEndedListener): void {
  setSingleton(ENDED, listener);
}

export interface StartOptions {
  /** The run was taken over from a dead owner: continue from its last checkpoint instead of starting it. */
  recovered?: boolean;
  /** Events to emit right after RUN_STARTED (e.g. a fork's side-effect warnings). */
  preamble?: AguiEvent[];
  /** What the run's start reads of its thread, when the claim's statement already read it: not read again. */
  startRead?: StartRead;
}

/** The start options of a claimed run: what its claim already read for it. */
export function startedWith(claimed: { startRead?: StartRead }): StartOptions {
  return claimed.startRead ? { startRead: claimed.startRead } : {};
}

/** Abort a run executing in this process because it was asked to stop. Returns whether it executes here. */
export function abortCancelledRun(runId: string, by: string): boolean {
  const run = activeRuns().get(runId);
  if (!run) return false;
  if (!run.abort.signal.aborted) run.abort.abort(cancelReason(by));
  return true;
}

/**
 * Execute a claimed run in the background of this process: it does not depend on the request that started it, so a
 * closed tab does not stop a refund halfway. Events go to the durable log; requests stream them from there.
 */
export function startRunInBackground(run: Run, startSeq: number, options: StartOptions = {}): void {
  const runs = activeRuns();
  // Never two executions of one run in one process: they would share the owner, so neither notices the other, and
  // the second one's LangGraph loop writes checkpoints beside the first's (a second head whose interrupt the ledger
  // never records). The sweeper can claim a run a request is just starting here (see recovery.ts); whichever starts
  // it second leaves it to the first, and the request still streams it from the log.
  if (runs.has(run.id)) return;
  const abort = new AbortController();
  // The trace begun at the claim; a recovered run continues the trace its row names (another process began it).
  const span =
    takeRunSpan(run.id) ??
    startRunSpan(
      options.recovered ? "run (recovered)" : "run",
      { "run.id": run.id, "thread.id": run.threadId, "run.kind": run.kind, "run.attempt": run.attempts },
      remoteParent(run.traceId, run.traceSpanId),
    );
  let inputWaiting: boolean | undefined;
  const done = withRunSpan(span, () => {
    observeRunStart(run, options.recovered ?? false);
    return executeRun(run, startSeq, abort, options, new RunTraceHandler(span)).then((ended) => {
      inputWaiting = ended?.inputWaiting;
    });
  })
    .catch((error) => observeRunStopped(run, isLostOwnership(error), error))
    .finally(() => {
      span.end();
      runs.delete(run.id);
      // Input that waited for this run (double texting) may start now.
      // (The deployment's MULTITASK may turn it on for an agent that declares `reject`.)
      const ranAs = findAgentForKey(run.agentKey);
      if (ranAs && multitaskOf(ranAs) !== "reject") runEndListener()?.(run.threadId, inputWaiting);
    });
  runs.set(run.id, { done, abort });
}

async function executeRun(
  run: Run,
  startSeq: number,
  abort: AbortController,
  options: StartOptions,
  trace: RunTraceHandler,
): Promise<{ inputWaiting: boolean | undefined } | undefined> {
  const { signal } = abort;
  const database = await getDatabase();
  const owner = run.owner ?? "";
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
      ...(runWasStarted(logged) ? [] : started),
      ...closeOpenEvents(logged),
      { type: EventType.CUSTOM, name: RUN_RECOVERED_EVENT, value: { attempt: run.attempts } },
    ];
  } else {
    opening = [...started, ...(options.preamble ?? [])];
  }
  const open = () => {
    if (opening) sink.emit(opening);
    opening = null;
  };
  const config = { configurable: { thread_id: run.threadId } };
  // Asked to stop before it got here (its owner died after the request, or it was still queued): end it as stopped.
  if (run.cancelRequestedBy && !signal.aborted) abort.abort(cancelReason(run.cancelRequestedBy));
  // The run's wall-clock limit: past it, the graph is aborted and the run ends timed out.
  const limit =
    env.RUN_MAX_MS > 0
      ? setTimeout(() => {
          if (!signal.aborted) abort.abort({ code: RUN_TIMED_OUT, limitMs: env.RUN_MAX_MS });
        }, env.RUN_MAX_MS)
      : undefined;
  limit?.unref();
  let gate: BudgetGate | undefined;
  try {
    signal.throwIfAborted();
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
    const { input, configurable } = await graphInputFor(
      run,
      { agent, graph },
      options.recovered ?? false,
      spending,
    );
    gate = new BudgetGate(spending, { retry: run.kind === "retry" });
    const stream = await graph.stream(input, {
      // Every checkpoint of the run records the agent version it ran under (the saver stamps it into metadata).
      configurable: {
        ...config.configurable,
        ...configurable,
        agent_version: agent.version,
        hitl_run_id: run.id,
        // Its checkpoint writes are queued, not waited for one by one (they share statements); the end below waits.
        defer_writes: !options.recovered,
      },
      streamMode: [...STREAM_MODES],
      // A recovered run writes every checkpoint before moving on: it already crashed once.
      durability: options.recovered ? "sync" : "async",
      signal,
      // The spending limits first (nothing else hears of a call they hold back); spans and model metrics.
      callbacks: [gate, trace],
    });
    let progressed = !options.recovered;
    for await (const item of stream as AsyncIterable<[string, unknown]>) {
      open();
      sink.emit(mapper.push(item[0], item[1]));
      if (!progressed && item[0] === "tasks" && isTaskResult(item[1])) {
        progressed = true;
        await resetRunAttempts({ db: database.db, runId: run.id, owner });
      }
    }
    open();
    await sink.drain();
    // Every checkpoint write of the run committed (a failed one fails the run here, as LangGraph's own await would).
    await batcherFor(database.checkpointSql).settled(run.threadId, true);
    // The head as this run wrote it (kept by the saver, lib/checkpoint/run-head.ts): not read back.
    const state = await graph.getState({
      configurable: { ...config.configurable, hitl_head_of_run: run.id },
    });
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
    const ended = await finalizeRun({
      // A run that ends asking nothing while the ledger still waits for a decision did not do what was decided (its
      // graph no longer has the question): that is an error for a supervisor, never a success (checked as it closes).
      refuseIfPending: interrupts.length === 0 && run.kind !== "fork" && run.kind !== "migration",
      db: database.db,
      runId: run.id,
      threadId: run.threadId,
      owner,
      status: interrupts.length > 0 ? "interrupted" : "succeeded",
      threadStatus: interrupts.length > 0 ? "interrupted" : "completed",
      interrupts,
      context: agent.context(final.values),
      checkpointId: (state.config.configurable?.checkpoint_id as string | undefined) ?? null,
      events: sink.number(mapper.finish(final)),
      tokens: gate.tokens(),
    });
    observeRunEnd(run, interrupts.length > 0 ? "interrupted" : "succeeded");
    return ended;
  } catch (error) {
    trace.closeAll();
    open();
    // The run's queued checkpoint writes land (or fail) before its end is recorded: its thread stays at a step that
    // is stored, whoever continues it. A failure among them is consumed here (this run fails anyway), never left for
    // the thread's next run.
    await batcherFor(database.checkpointSql)
      .settled(run.threadId, true)
      .catch(() => {});
    // Stopped by an operator, at the run's time limit, or by a model that did not answer: the graph is aborted (no
    // node starts after this), the thread stays at its last checkpoint ("Try again" continues it), and the run ends
    // `cancelled` / `timed_out` with a RUN_ERROR that ends every open stream of it.
    // (An operator's "stop" answer to a spending limit ends the run the same way, raised by the gate in its node.)
    const budgetStop =
      !signal.aborted && errorCodeOf(error) === RUN_CANCELLED ? appErrorOf(error) : undefined;
    const stop = budgetStop
      ? { status: "cancelled" as const, code: RUN_CANCELLED, message: budgetStop.message }
      : isCancelReason(signal.reason)
        ? { status: "cancelled" as const, code: RUN_CANCELLED, message: stoppedMessage(signal.reason.by) }
        : isTimeoutReason(signal.reason)
          ? {
              status: "timed_out" as const,
              code: RUN_TIMED_OUT,
              message: `The run took longer than its limit of ${Math.round(signal.reason.limitMs / 1000)} s and was stopped at its last saved step.`,
            }
          : !signal.aborted && isModelTimeout(error)
            ? {
                status: "timed_out" as const,
                code: MODEL_TIMED_OUT,
                message: `The model did not answer within ${Math.round(env.MODEL_TIMEOUT_MS / 1000)} s, retries included; the run stopped at its last saved step.`,
              }
            : null;
    if (stop) {
      await sink.drain().catch(() => {});
      const ended = await finalizeRun({
        db: database.db,
        runId: run.id,
        threadId: run.threadId,
        owner,
        status: stop.status,
        threadStatus: "failed",
        interrupts: [],
        checkpointId: null,
        error: { code: stop.code, message: stop.message },
        events: sink.number(mapper.fail({ code: stop.code, message: stop.message })),
        ...(gate ? { tokens: gate.tokens() } : {}),
      });
      observeRunEnd(run, stop.status, stop.code);
      return ended;
    }
    if (isLostOwnership(error) || signal.aborted) throw new LostOwnershipError(String(error));
    await sink.drain().catch(() => {});
    const attention = errorCodeOf(error)?.startsWith("conflict:") === true;
    await failRun({
      db: database.db,
      run,
      owner,
      sink,
      fail: mapper.fail.bind(mapper),
      error,
      ...(gate ? { tokens: gate.tokens() } : {}),
      ...(attention ? { threadStatus: "needs_attention" as const } : {}),
    });
  } finally {
    clearTimeout(limit);
  }
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
  db: Awaited<ReturnType<typeof getDatabase>>["db"];
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
