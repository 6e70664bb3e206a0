import type { SqlClient } from "@/lib/db/sql-client";
import { databaseFault } from "@/lib/platform/database-faults";
import { singleton } from "@/lib/platform/singleton";
import { WRITE_BATCH } from "./sql";

/** One `put`: the checkpoint row (its JSON already serialized) and the channel values it changed. */
export interface CheckpointPut {
  kind: "checkpoint";
  threadId: string;
  ns: string;
  checkpointId: string;
  parentId: string | null;
  checkpoint: string;
  metadata: string;
  /** `value` null stores a NULL blob (an "empty" channel). */
  blobs: readonly { channel: string; version: string; type: string; value: Uint8Array | null }[];
}

/** One `putWrites`: a task's writes against a checkpoint. `upsert`: special writes, which replace earlier ones. */
export interface WritesPut {
  kind: "writes";
  threadId: string;
  ns: string;
  checkpointId: string;
  taskId: string;
  taskPath: string;
  upsert: boolean;
  writes: readonly { idx: number; channel: string; type: string; value: Uint8Array }[];
}

/**
 * A run's events for its thread's log (`EventSink`): written only while `owner` still holds the run active, with the
 * thread's `last_seq` moved and the append announced to other instances that follow the thread. `event` is the
 * event's JSON text.
 */
export interface EventsPut {
  kind: "events";
  threadId: string;
  runId: string;
  owner: string;
  events: readonly { seq: number; type: string; event: string }[];
}

export type BatchItem = CheckpointPut | WritesPut | EventsPut;

/**
 * The process's batcher for a client: every saver on it and every run's event sink (`EventSink`) share it, so a
 * step's checkpoint, its writes and its events — of every thread the process runs — go out together. A process-wide
 * `singleton`: a module bundled twice must not split the batch.
 */
export function batcherFor(sql: SqlClient): WriteBatcher {
  const all = singleton("write-batchers", () => new WeakMap<SqlClient, WriteBatcher>());
  let batcher = all.get(sql);
  if (!batcher) {
    batcher = new WriteBatcher(sql);
    all.set(sql, batcher);
  }
  return batcher;
}

/** Name of the prepared batch statement. */
export const WRITE_BATCH_NAME = "cp_write_batch";

/** Most items in one statement. */
const MAX_ITEMS = 64;
/** Most payload bytes in one statement (an item larger than this still goes, alone). */
const MAX_BYTES = 8 * 1024 * 1024;

interface Accepted {
  pending: Set<Promise<void>>;
  failure: { error: unknown } | null;
}

interface Queued {
  item: BatchItem;
  keys: string[];
  bytes: number;
  resolve: (written: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for the checkpointer's writes. LangGraph does not wait for a step's writes before running the next
 * step (its default "async" durability), so writes arrive while earlier ones are still on the wire — from one thread,
 * and from every other thread of the process. The first write goes out at once; whatever arrives while it is in
 * flight waits and then goes out as ONE statement: one round trip and one commit instead of one each.
 *
 * Each caller's promise settles only when the statement holding its item has committed, so a resolved `put` is as
 * durable as before. Items leave in arrival order; a batch ends before an item whose checkpoint or write key it
 * already holds (that item goes in the next statement, after the first has committed), so repeated writes keep
 * their one-by-one meaning. When a statement fails, its items are retried one per statement, so each caller gets
 * its own outcome and one bad item never fails another's write.
 */
export class WriteBatcher {
  private readonly queue: Queued[] = [];
  private flushing = false;
  private scheduled = false;
  /** Per thread: accepted writes not yet committed, and the first of them that failed. */
  private readonly accepted = new Map<string, Accepted>();

  constructor(private readonly sql: SqlClient) {}

  /**
   * Queue a checkpoint write without waiting for its commit (see {@link DrizzleCheckpointSaver} `defer_writes`). It
   * still leaves in arrival order, after everything queued before it. Whoever ends the thread's run must call
   * {@link settled} with `rethrow` before relying on it: that waits for the commit and reports a failure.
   */
  accept(item: CheckpointPut | WritesPut): void {
    const { threadId } = item;
    let entry = this.accepted.get(threadId);
    if (!entry) {
      entry = { pending: new Set(), failure: null };
      this.accepted.set(threadId, entry);
    }
    const own = entry;
    const done: Promise<void> = this.write(item)
      .then(
        () => undefined,
        (error: unknown) => {
          own.failure ??= { error };
        },
      )
      .finally(() => {
        own.pending.delete(done);
        if (own.pending.size === 0 && own.failure === null && this.accepted.get(threadId) === own) {
          this.accepted.delete(threadId);
        }
      });
    own.pending.add(done);
  }

  /**
   * Resolves once the writes accepted for `threadId` have committed or failed. A reader (no `rethrow`) waits only for
   * those accepted before it asked — a run that keeps writing cannot hold it — so it never reads a thread older than
   * what this process already handed to LangGraph as stored. The run's end (`rethrow`) waits until none is left and
   * rejects with the first failure, which it consumes: a failure is reported once, to the run that made it, and never
   * to the thread's next run.
   */
  async settled(threadId: string, rethrow = false): Promise<void> {
    if (!rethrow) {
      const entry = this.accepted.get(threadId);
      if (entry && entry.pending.size > 0) await Promise.all([...entry.pending]);
      return;
    }
    for (;;) {
      const entry = this.accepted.get(threadId);
      if (!entry) return;
      if (entry.pending.size > 0) {
        await Promise.all([...entry.pending]);
        continue;
      }
      this.accepted.delete(threadId);
      if (entry.failure) throw entry.failure.error;
      return;
    }
  }

  /**
   * Resolves when `item` is committed; rejects with the database's error for it. Resolves `false` for events of a run
   * its owner no longer holds (nothing of them was written), `true` otherwise.
   */
  write(item: BatchItem): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ item, keys: keysOf(item), bytes: payloadBytes(item), resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // Writes made before the event loop turns join it (a run's steps that ran without waiting for I/O, other runs'
    // writes of the same turn). On embedded PGlite, whose queries run on this thread, nothing would gather otherwise.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        try {
          const owned = await this.send(batch);
          for (const q of batch) q.resolve(written(q.item, owned));
        } catch (error) {
          // The database went away or stopped answering: the batch may have committed all the same (a commit whose
          // answer was lost), so nothing is sent again — each item fails with the fault, and its run is handed to
          // recovery, which reads what was stored. One by one is only for an error of the statement itself: it finds
          // the item the database refused and lets the others through.
          if (batch.length === 1 || databaseFault(error)) for (const q of batch) q.reject(error);
          else await this.oneByOne(batch);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async oneByOne(batch: readonly Queued[]): Promise<void> {
    for (const q of batch) {
      try {
        q.resolve(written(q.item, await this.send([q])));
      } catch (error) {
        q.reject(error);
      }
    }
  }

  /** One statement for these items: answers the runs whose events it was allowed to write. */
  private async send(batch: readonly Queued[]): Promise<Set<string>> {
    const rows = await this.sql.query<{ owned: string[] | null }>(
      WRITE_BATCH,
      batchParams(batch.map((q) => q.item)),
      WRITE_BATCH_NAME,
    );
    return new Set(rows[0]?.owned ?? []);
  }

  /** The longest prefix of the queue that fits the limits and names no key twice (at least one item). */
  private take(): Queued[] {
    const seen = new Set<string>();
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && n < MAX_ITEMS) {
      const q = this.queue[n]!;
      if (n > 0 && (bytes + q.bytes > MAX_BYTES || q.keys.some((key) => seen.has(key)))) break;
      for (const key of q.keys) seen.add(key);
      bytes += q.bytes;
      n++;
    }
    return this.queue.splice(0, n);
  }
}

const SEP = "\u0000";

/** Whether an item was written: events only when their run was still its owner's. */
function written(item: BatchItem, owned: ReadonlySet<string>): boolean {
  return item.kind !== "events" || owned.has(item.runId);
}

/**
 * The rows an item may update in place: a checkpoint row, and each write's (task, idx). Blobs are never updated.
 * Events only insert (their sequence numbers are the thread's own): they never hold a batch back.
 */
function keysOf(item: BatchItem): string[] {
  if (item.kind === "events") return [];
  const base = `${item.threadId}${SEP}${item.ns}${SEP}${item.checkpointId}`;
  if (item.kind === "checkpoint") return [`c${SEP}${base}`];
  return item.writes.map((w) => `w${SEP}${base}${SEP}${item.taskId}${SEP}${w.idx}`);
}

function payloadBytes(item: BatchItem): number {
  if (item.kind === "events") return item.events.reduce((n, e) => n + e.event.length, 0);
  if (item.kind === "checkpoint") {
    return item.blobs.reduce(
      (n, b) => n + (b.value?.byteLength ?? 0),
      item.checkpoint.length + item.metadata.length,
    );
  }
  return item.writes.reduce((n, w) => n + w.value.byteLength, 0);
}

/** The parameters of {@link WRITE_BATCH} for `items` (see its comment for their order). */
export function batchParams(items: readonly BatchItem[]): unknown[] {
  const chunks: Uint8Array[] = [];
  let total = 0;
  /** Appends a payload; returns its [offset, length] in the packed parameter, length -1 for NULL. */
  const pack = (value: Uint8Array | null): [number, number] => {
    if (value === null) return [0, -1];
    const at = total;
    chunks.push(value);
    total += value.byteLength;
    return [at, value.byteLength];
  };
  // One array per statement parameter, each group's keys in the statement's parameter order ($2…$34).
  const cp = columns("thread", "ns", "id", "parent", "cpOff", "cpLen", "mdOff", "mdLen");
  const bl = columns("thread", "ns", "channel", "version", "type", "off", "len");
  const wr = columns(
    "thread",
    "ns",
    "checkpoint",
    "task",
    "path",
    "idx",
    "channel",
    "type",
    "off",
    "len",
    "upsert",
  );
  const ev = columns("thread", "seq", "run", "owner", "type", "off", "len");
  for (const item of items) {
    if (item.kind === "events") {
      const { threadId: thread, runId: run, owner } = item;
      for (const { seq, type, event } of item.events) {
        const [off, len] = pack(Buffer.from(event, "utf8"));
        push(ev, { thread, seq, run, owner, type, off, len });
      }
    } else if (item.kind === "checkpoint") {
      const [cpOff, cpLen] = pack(Buffer.from(item.checkpoint, "utf8"));
      const [mdOff, mdLen] = pack(Buffer.from(item.metadata, "utf8"));
      const { threadId: thread, ns } = item;
      push(cp, { thread, ns, id: item.checkpointId, parent: item.parentId, cpOff, cpLen, mdOff, mdLen });
      for (const { channel, version, type, value } of item.blobs) {
        const [off, len] = pack(value);
        push(bl, { thread, ns, channel, version, type, off, len });
      }
    } else {
      const { threadId: thread, ns, checkpointId: checkpoint, taskId: task, taskPath: path, upsert } = item;
      for (const { idx, channel, type, value } of item.writes) {
        const [off, len] = pack(value);
        push(wr, { thread, ns, checkpoint, task, path, idx, channel, type, off, len, upsert });
      }
    }
  }
  const packed = Buffer.allocUnsafe(total);
  let at = 0;
  for (const chunk of chunks) {
    packed.set(chunk, at);
    at += chunk.byteLength;
  }
  return [packed, ...Object.values(cp), ...Object.values(bl), ...Object.values(wr), ...Object.values(ev)];
}

type Columns<K extends string> = Record<K, unknown[]>;

/** Empty column arrays under these names, in this order. */
function columns<K extends string>(...names: K[]): Columns<K> {
  return Object.fromEntries(names.map((name) => [name, []])) as unknown as Columns<K>;
}

/** Append one row: each value to its column. */
function push<K extends string>(target: Columns<K>, row: Record<K, unknown>): void {
  for (const name of Object.keys(target) as K[]) target[name].push(row[name]);
}
