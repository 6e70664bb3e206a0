import "server-only";
import type { BaseEvent } from "@ag-ui/core";
import { encodeSse } from "@/lib/agui";
import { ACTIVE_RUN_STATUSES } from "@/lib/contract/wire";
import type { AppDb } from "@/lib/db/open";
import { type LoggedEvent, readEvents } from "@/lib/db/queries/events";
import { followThread, unfollowThread } from "@/lib/db/queries/followers";
import { getRun } from "@/lib/db/queries/runs";
import { databaseFaultError, retryingDatabaseFaults } from "@/lib/platform/database-faults";
import { env } from "@/lib/platform/env";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { metrics } from "@/lib/platform/observability/metrics";
import { singleton } from "@/lib/platform/singleton";
import { instanceId } from "../../platform/instance";
import { subscribeEvents } from "./event-bus";

const TERMINAL = new Set(["RUN_FINISHED", "RUN_ERROR"]);
/** Events per read of the log. */
const PAGE = 500;

export interface TailOptions {
  db: AppDb;
  threadId: string;
  afterSeq: number;
  signal: AbortSignal;
  /** Stop after this run's RUN_FINISHED / RUN_ERROR. */
  untilRunId?: string;
  /** Called when nothing new arrived for a while: true ends the tail (e.g. no run is active any more). */
  idle: (afterSeq: number) => Promise<boolean>;
  idleMs?: number;
  /** Another instance executes the run: register as its follower while tailing (see `thread_followers`). */
  remote?: boolean;
  /**
   * The run was just claimed at `afterSeq` and this process executes it: nothing after `afterSeq` is logged yet, and
   * its events will be heard here, so the log is not read at the start. The tail must subscribe before the run
   * starts (it does so synchronously, in the first `next()`); a batch heard out of order still reads the log.
   */
  fresh?: boolean;
}

/**
 * The thread's events after `afterSeq`: what the log already holds, then live ones as they are committed. The log
 * is the source of truth; the in-process bus wakes the tail and, when its batch follows on exactly, stands in for a
 * read: the log is read at the start, on a gap in what was heard, when another instance announces events, and when
 * nothing was heard for `idleMs` — not after every batch this process published itself. Each event is yielded once,
 * in sequence order.
 */
export async function* tailEvents(options: TailOptions): AsyncGenerator<LoggedEvent> {
  for await (const batch of tailEventBatches(options)) yield* batch;
}

/**
 * {@link tailEvents} in the batches they become known (one log read, or one batch a run published): an SSE body
 * writes each batch as one chunk, so a run's burst of events costs one socket write, not one per event.
 */
export async function* tailEventBatches(options: TailOptions): AsyncGenerator<LoggedEvent[]> {
  const { db, threadId, signal } = options;
  // Following a run another instance executes: say so before the first read, so its appends from then on notify.
  const follower = options.remote ? await follow(db, threadId) : null;
  let after = options.afterSeq;
  let heard: LoggedEvent[] = [];
  // Read the log next time round: at the start (unless the run is fresh), and whenever another instance says it
  // appended (an empty batch).
  let mustRead = !options.fresh;
  let wake: (() => void) | null = null;
  const unsubscribe = subscribeEvents(threadId, (batch) => {
    if (batch.length === 0) mustRead = true;
    heard.push(...batch);
    wake?.();
  });
  try {
    while (!signal.aborted) {
      heard = heard.filter((e) => e.seq > after);
      let next: LoggedEvent[];
      if (heard[0]?.seq === after + 1) {
        next = [];
        for (const e of heard) {
          if (e.seq !== after + next.length + 1) break;
          next.push(e);
        }
      } else if (mustRead || heard.length > 0) {
        // A gap between what was yielded and what was heard, or news from elsewhere: the log has it.
        mustRead = false;
        next = await untilDatabaseAnswers(signal, () =>
          readEvents({ db, threadId, afterSeq: after, limit: PAGE }),
        );
        // A full page: there may be more behind it.
        if (next.length === PAGE) mustRead = true;
      } else {
        // Everything heard so far was yielded: wait for the next batch instead of asking the log again.
        next = [];
      }
      if (next.length > 0) {
        const end = next.findIndex(
          (e) => options.untilRunId !== undefined && e.runId === options.untilRunId && TERMINAL.has(e.type),
        );
        const batch = end >= 0 ? next.slice(0, end + 1) : next;
        after = (batch.at(-1) as LoggedEvent).seq;
        yield batch;
        if (end >= 0) return;
      }
      if (mustRead || heard.some((e) => e.seq > after)) continue;
      const woke = await new Promise<boolean>((resolve) => {
        const onAbort = () => wake?.();
        const timer = setTimeout(() => {
          signal.removeEventListener("abort", onAbort);
          resolve(false);
        }, options.idleMs ?? 1_000);
        wake = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          resolve(true);
        };
        signal.addEventListener("abort", onAbort, { once: true });
      });
      wake = null;
      if (!woke && !signal.aborted) {
        const more = await untilDatabaseAnswers(signal, () =>
          readEvents({ db, threadId, afterSeq: after, limit: 1 }),
        );
        if (more.length > 0) mustRead = true;
        else if (await untilDatabaseAnswers(signal, () => options.idle(after))) {
          // The run may have written its last events and ended between the read above and that check: a run's
          // events are logged before it leaves the active states, so one more read now sees all of them.
          const last = await untilDatabaseAnswers(signal, () =>
            readEvents({ db, threadId, afterSeq: after }),
          );
          if (last.length > 0) yield last;
          return;
        }
      }
    }
  } finally {
    unsubscribe();
    follower?.stop();
  }
}

/**
 * `read`, again with back-off while the database is unavailable or busy (a failover, a pooler restart), for up to
 * STREAM_DATABASE_GRACE_MS: a stream open across an outage goes on where it was (the log holds every event; the
 * keep-alives keep the connection). Past the grace, or on any other error, it throws.
 */
function untilDatabaseAnswers<T>(signal: AbortSignal, read: () => Promise<T>): Promise<T> {
  return retryingDatabaseFaults(read, {
    withinMs: env.STREAM_DATABASE_GRACE_MS,
    initialMs: 200,
    signal,
    onBack: (waitedMs) => logger().info({ waitedMs }, "event stream: database back"),
  });
}

/** How long a follower's row holds without a refresh (refreshed every third of it while the stream is open). */
const FOLLOW_TTL_MS = 30_000;

/**
 * Register this instance as a follower of the thread (`thread_followers`) until `stop`. A failure only costs the
 * push: the stream still reads the log every STREAM_POLL_MS.
 */
async function follow(db: AppDb, threadId: string): Promise<{ stop(): void }> {
  const me = instanceId();
  const register = () =>
    followThread({ db, threadId, instanceId: me, ttlMs: FOLLOW_TTL_MS }).catch((error) =>
      logger().warn({ threadId, ...errorFields(error) }, "event stream: following not registered"),
    );
  await register();
  const timer = setInterval(() => void register(), FOLLOW_TTL_MS / 3);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      void unfollowThread({ db, threadId, instanceId: me }).catch(() => {});
    },
  };
}

const encoder = new TextEncoder();

/** Events as one SSE chunk (each event its own `data:` block, as if written one by one). */
function encodeBatch(events: LoggedEvent[]): Uint8Array {
  let text = "";
  for (const e of events) text += encodeSse(e.event as unknown as BaseEvent, e.seq);
  return encoder.encode(text);
}

/**
 * Open SSE bodies of this process, each with a function that ends it normally: the `open-streams` singleton, shared
 * with the inbox streams (lib/queue/inbox-stream.ts) and with the shutdown that instrumentation.ts installs.
 */
function openStreams(): Set<() => void> {
  return singleton("open-streams", () => new Set<() => void>());
}

/**
 * End every open event stream of this process with a normal close (the process is about to exit). Clients reconnect
 * with their last seq — to another instance — and miss nothing: the log is the source of truth. Without this, an open
 * stream keeps `next start` from exiting until it ends by itself.
 */
export function endOpenStreams(): number {
  const ends = [...openStreams()];
  for (const end of ends) end();
  return ends.length;
}

/**
 * An SSE body of AG-UI events from {@link tailEvents} (after `prelude`, sent first: a compaction snapshot), with a
 * keep-alive comment every 15 s.
 */
export function sseBody(
  options: Omit<TailOptions, "signal"> & { prelude?: LoggedEvent[] },
  requestSignal: AbortSignal,
): ReadableStream<Uint8Array> {
  const abort = new AbortController();
  requestSignal.addEventListener("abort", () => abort.abort(), { once: true });
  let keepAlive: NodeJS.Timeout | undefined;
  let endedByServer = false;
  const end = () => {
    endedByServer = true;
    abort.abort();
  };
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      openStreams().add(end);
      sseOpened();
      // A comment first, so the response head goes out at once: the client knows the stream is open before the
      // first event exists (and a reconnecting client is not left waiting on headers).
      controller.enqueue(encoder.encode(": stream open\n\n"));
      keepAlive = setInterval(() => controller.enqueue(encoder.encode(": keep-alive\n\n")), 15_000);
      try {
        if (options.prelude?.length) controller.enqueue(encodeBatch(options.prelude));
        for await (const batch of tailEventBatches({ ...options, signal: abort.signal })) {
          controller.enqueue(encodeBatch(batch));
        }
      } catch (error) {
        // The database did not come back within the grace: a retryable code (the client reconnects with its last
        // seq, and the log has everything); anything else is a failure of the stream itself.
        const fault = databaseFaultError(error);
        logger().error(
          { threadId: options.threadId, ...(fault ? { code: fault.code } : {}), ...errorFields(error) },
          "event stream: tail failed",
        );
        const failure = fault
          ? {
              type: "RUN_ERROR",
              message: "The database did not answer in time; reconnect to continue from the last event.",
              code: fault.code,
            }
          : {
              type: "RUN_ERROR",
              message: "The event stream failed on the server.",
              code: "internal:stream",
            };
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(failure)}\n\n`));
      } finally {
        if (openStreams().delete(end)) sseClosed();
        clearInterval(keepAlive);
        if (!abort.signal.aborted || endedByServer) {
          try {
            controller.close();
          } catch {
            // the client went away at the same moment: nothing left to close
          }
        }
      }
    },
    cancel() {
      if (openStreams().delete(end)) sseClosed();
      clearInterval(keepAlive);
      abort.abort();
    },
  });
}

/**
 * The SSE response for a thread's events after `afterSeq`: until `runId`'s RUN_FINISHED / RUN_ERROR when a run is
 * given (ending early if that run turns out to be no longer active), or just what is logged when none is. `prelude`
 * goes out first (a compaction snapshot, when `afterSeq` is before the thread's compacted seq).
 */
export function eventStreamResponse(
  {
    db,
    threadId,
    afterSeq,
    runId,
    prelude,
    remote,
    fresh,
  }: {
    db: AppDb;
    threadId: string;
    afterSeq: number;
    runId?: string;
    prelude?: LoggedEvent[];
    /** The run executes elsewhere (or is not claimed yet): follow the thread so its appends announce themselves. */
    remote?: boolean;
    /** `runId` was just claimed at `afterSeq` and is about to start in this process (see {@link TailOptions}). */
    fresh?: boolean;
  },
  signal: AbortSignal,
): Response {
  const body = sseBody(
    {
      prelude,
      db,
      threadId,
      afterSeq,
      untilRunId: runId,
      remote: Boolean(runId && remote),
      fresh: Boolean(runId && fresh),
      idleMs: runId ? env.STREAM_POLL_MS : 0,
      idle: async () => {
        if (!runId) return true;
        const run = await getRun({ db, runId });
        return !run || !ACTIVE_RUN_STATUSES.includes(run.status as (typeof ACTIVE_RUN_STATUSES)[number]);
      },
    },
    signal,
  );
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}

function sseOpened(): void {
  const m = metrics();
  m.sseOpen.inc();
  m.sseTotal.inc();
}

function sseClosed(): void {
  metrics().sseOpen.dec();
}
