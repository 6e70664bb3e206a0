import "server-only";
import { createAguiMapper, finishInputFromState, requireId, resumeToCommand } from "@/lib/agui";
import { getDatabase } from "@/lib/db/client";
import { getThread } from "@/lib/db/queries/threads";
import type { Run } from "@/lib/db/schema";
import { toAppError } from "@/lib/errors";
import { refundGraphInput } from "@/lib/graphs/refund";
import { EventSink } from "./event-sink";
import { finalizeRun, LostOwnershipError } from "./finalize";
import { getRefundGraph } from "./graph";
import type { RunInput } from "./run-input";

const STREAM_MODES = ["messages", "tasks", "custom"] as const;

/** Runs executing in this process, by id (shutdown waits for them; the heartbeat extends their leases). */
const KEY = Symbol.for("hitl-console.active-runs");
type G = typeof globalThis & { [KEY]?: Map<string, Promise<void>> };
export function activeRuns(): Map<string, Promise<void>> {
  const g = globalThis as G;
  g[KEY] ??= new Map();
  return g[KEY];
}

/**
 * Execute a claimed run in the background of this process: it does not depend on the request that started it, so a
 * closed tab does not stop a refund halfway. Events go to the durable log; the request streams them from there.
 */
export function startRunInBackground(run: Run, startSeq: number): void {
  const runs = activeRuns();
  const done = executeRun(run, startSeq)
    .catch((error) => console.error(`[run ${run.id}] could not be finalized:`, error))
    .finally(() => runs.delete(run.id));
  runs.set(run.id, done);
}

async function executeRun(run: Run, startSeq: number): Promise<void> {
  const database = await getDatabase();
  const sink = new EventSink(database.db, run.threadId, run.id, startSeq);
  const mapper = createAguiMapper({ threadId: run.threadId, runId: run.id });
  const runInput = run.input as RunInput;
  // The graph records who decided (`operator_id`) with the decisions it acts on.
  const config = {
    configurable: {
      thread_id: run.threadId,
      ...(runInput.kind === "resume" ? { operator_id: runInput.actor } : {}),
    },
  };
  const owner = run.owner ?? "";
  sink.emit(mapper.start());
  try {
    const graph = await getRefundGraph();
    const input = await graphInput(run);
    const stream = await graph.stream(input as never, {
      ...config,
      streamMode: [...STREAM_MODES],
      durability: run.kind === "recover" ? "sync" : "async",
    });
    for await (const item of stream as AsyncIterable<[string, unknown]>) {
      sink.emit(mapper.push(item[0], item[1]));
    }
    await sink.drain();
    const state = await graph.getState(config);
    const final = finishInputFromState(state);
    // A pending interrupt without an id cannot be answered by id: fail loudly rather than pause forever.
    const interrupts = final.interrupts.map((i) => ({ id: requireId(i.id, "interrupt"), value: i.value }));
    const finalEvents = mapper.finish(final);
    await finalizeRun(database.db, {
      runId: run.id,
      threadId: run.threadId,
      owner,
      status: interrupts.length > 0 ? "interrupted" : "succeeded",
      threadStatus: interrupts.length > 0 ? "interrupted" : "completed",
      interrupts,
      checkpointId: (state.config.configurable?.checkpoint_id as string | undefined) ?? null,
      events: sink.number(finalEvents),
    });
  } catch (error) {
    if (error instanceof LostOwnershipError) throw error;
    const appError = toAppError(error, `run ${run.id}`);
    await sink.drain().catch(() => {});
    const code = appError.code === "internal:unexpected" ? "internal:run_failed" : appError.code;
    await finalizeRun(database.db, {
      runId: run.id,
      threadId: run.threadId,
      owner,
      status: "failed",
      threadStatus: "failed",
      interrupts: [],
      checkpointId: null,
      error: { code, message: appError.message },
      events: sink.number(mapper.fail({ code, message: appError.message })),
    });
  }
}

async function graphInput(run: Run): Promise<unknown> {
  const input = run.input as RunInput;
  if (input.kind === "resume") return resumeToCommand(input.resume);
  if (input.kind === "input") {
    const database = await getDatabase();
    const thread = await getThread({ db: database.db, threadId: run.threadId });
    return refundGraphInput({
      messageId: input.messageId,
      customerMessage: input.text,
      orderRef: thread?.orderRef ?? null,
    });
  }
  throw new Error(`run kind ${input.kind} is not executable yet`);
}
