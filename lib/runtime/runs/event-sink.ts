import "server-only";
import type { BaseEvent } from "@ag-ui/core";
import { withSeq } from "@/lib/agui";
import { batcherFor } from "@/lib/checkpoint/write-batch";
import type { AppDb } from "@/lib/db/open";
import {
  appendEvents,
  type EventSerializer,
  eventSerializer,
  type LoggedEvent,
} from "@/lib/db/queries/events";
import type { SqlClient } from "@/lib/db/sql-client";
import { metrics } from "@/lib/platform/observability/metrics";
import { publishEvents } from "./event-bus";
import { LostOwnershipError } from "./ownership";

/**
 * Numbers a run's events with the thread's sequence and makes them durable before anyone hears of them. Events are
 * written in batches: while one insert is in flight, the next events gather, so a fast-streaming model costs a
 * handful of statements, not one per token.
 */
export class EventSink {
  private queue: LoggedEvent[] = [];
  private flushing: Promise<void> | null = null;
  private failure: unknown = null;
  /** When the oldest queued event was emitted (for `hitl_event_log_lag_seconds`). */
  private queuedSince = 0;

  constructor(
    private readonly db: AppDb,
    private readonly threadId: string,
    private readonly runId: string,
    private readonly owner: string,
    private seq: number,
    /** Called once when a write finds the run owned by another process: its execution must stop at once. */
    private readonly onLost: (error: LostOwnershipError) => void = () => {},
    /**
     * The checkpointer's client: events then go out in the checkpointer's batched statement (`batcherFor`), with the
     * step's checkpoint and writes when they meet — one round trip and one commit for all. Without it, each batch of
     * events is a statement of its own on `db`.
     */
    private readonly via?: SqlClient,
  ) {}

  /** Number events and queue them for the log. */
  emit(events: BaseEvent[]): void {
    if (events.length === 0) return;
    if (this.queue.length === 0) this.queuedSince = performance.now();
    this.queue.push(...this.number(events));
    // After a failed write nothing more is written (drain() reports the failure). Starting flushLoop here would be
    // worse than useless: it would finish synchronously (its finally clearing `flushing` before `??=` stores the
    // settled promise), and drain() would then await that promise forever in microtasks, starving the whole process.
    if (this.failure) return;
    this.flushing ??= this.flushLoop();
  }

  /** Number events without queueing them: the caller writes them in its own transaction (run finalization). */
  number(events: BaseEvent[]): LoggedEvent[] {
    return events.map((event) => {
      this.seq += 1;
      return {
        seq: this.seq,
        runId: this.runId,
        type: event.type,
        event: withSeq(event, this.seq) as unknown as Record<string, unknown>,
      };
    });
  }

  /** The last sequence number given out (to `rewind` to, should the events numbered after it never be written). */
  mark(): number {
    return this.seq;
  }

  /**
   * Events numbered after `seq` were not written (the transaction that carried them failed, before anyone heard of
   * them): give their numbers out again, so the log has no hole.
   */
  rewind(seq: number): void {
    if (seq > this.seq) throw new Error(`event sink: cannot rewind forward (${this.seq} → ${seq})`);
    this.seq = seq;
  }

  /** The serializer of this thread's events (sealed under its key): asked once, again after a few seconds. */
  private serializing: { at: number; value: Promise<EventSerializer> } | null = null;
  private serializer(): Promise<EventSerializer> {
    if (!this.serializing || performance.now() - this.serializing.at > 5_000) {
      this.serializing = { at: performance.now(), value: eventSerializer(this.db, this.threadId) };
    }
    return this.serializing.value;
  }

  /** Wait until everything emitted so far is durable (and published). Throws if a write failed. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failure) throw this.failure;
  }

  private async flushLoop(): Promise<void> {
    try {
      // Let the rest of this turn's events join the first batch (a node's start, its first tokens): one statement
      // instead of one for the first event and one for the others. On embedded PGlite, whose queries run on this
      // thread, nothing else would gather while a write is under way.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.queue.length > 0 && !this.failure) {
        const batch = this.queue.splice(0);
        const since = this.queuedSince;
        const serialize = this.via ? await this.serializer() : null;
        const owned = serialize
          ? await batcherFor(this.via as SqlClient).write({
              kind: "events",
              threadId: this.threadId,
              runId: this.runId,
              owner: this.owner,
              events: batch.map((e) => ({ seq: e.seq, type: e.type, event: serialize(e.event) })),
            })
          : await appendEvents({
              db: this.db,
              threadId: this.threadId,
              runId: this.runId,
              owner: this.owner,
              batch,
            });
        if (!owned) {
          const lost = new LostOwnershipError(`run ${this.runId} is no longer owned by ${this.owner}`);
          this.onLost(lost);
          throw lost;
        }
        publishEvents(this.threadId, batch);
        metrics().eventLogLag.observe((performance.now() - since) / 1000);
      }
    } catch (error) {
      this.failure = error;
    } finally {
      this.flushing = null;
    }
  }
}
