import "server-only";
import type { Database } from "@/lib/db/open";
import type { Run } from "@/lib/db/schema";
import { remoteParent, startRunSpan, takeRunSpan, withRunSpan } from "@/lib/platform/observability/tracing";
import { peekSingleton, setSingleton, singleton } from "@/lib/platform/singleton";
import { RunTraceHandler } from "@/lib/runtime/runs/graph-callbacks";
import { observeRunStart, observeRunStopped } from "@/lib/runtime/runs/runs";
import { findAgentForKey, multitaskOf } from "../agents/registry";
import type { StartRead } from "./budget";
import { cancelReason } from "./cancel-reason";
import { executeRun, type StartOptions } from "./execute";
import { isLostOwnership } from "./ownership";

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

export type { StartOptions };

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
export function startRunInBackground({
  database,
  run,
  startSeq,
  options = {},
}: {
  /** The whole handle of the entry point that claimed the run: its execution writes through the checkpoint pool too. */
  database: Database;
  run: Run;
  startSeq: number;
  options?: StartOptions;
}): void {
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
    return executeRun(database, run, startSeq, abort, options, new RunTraceHandler(span)).then((ended) => {
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
