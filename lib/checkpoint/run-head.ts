import { singleton } from "@/lib/platform/singleton";
import type { TupleRow } from "./sql";

/*
 * The head of a thread as the run executing it wrote it (issue 31: no read of what the run already holds). A run in
 * LangGraph's "async" durability hands every write to this process's saver, so at its end the latest checkpoint and
 * its pending writes are known here exactly as they were stored: the run's end builds its state from them instead of
 * reading them back. Only for the root namespace, only for a run whose first read of the thread (the latest
 * checkpoint, or none) went through this saver, and only once. Anything unexpected — a write to another
 * namespace's head, a channel version not seen — leaves the head unknown, and the database is read as before.
 */

interface Blob {
  version: string;
  type: string;
  value: Uint8Array | null;
}

interface Write {
  taskPath: string;
  taskId: string;
  idx: number;
  channel: string;
  type: string;
  value: Uint8Array;
}

interface Head {
  runId: string;
  /** Each channel's latest value this run has seen (read at its start, or written since), by version. */
  blobs: Map<string, Blob>;
  checkpoint: {
    id: string;
    parentId: string | null;
    /** As stored: the checkpoint without its values (jsonb-safe JSON) and the metadata's JSON. */
    checkpoint: string;
    metadata: string;
  } | null;
  /** The checkpoint read at the run's start and its pending writes, in the order the read gave them. */
  seeded: { id: string; writes: Write[] } | null;
  /** Per checkpoint id: the writes this run put, by (task path, task, idx) as sortable text. */
  writes: Map<string, Map<string, Write>>;
  /** Set when something was read this memo cannot rebuild (pending sends of an old format): the head must be read. */
  unknown: boolean;
}

/** Most heads kept (a run that fails before its end leaves one behind until it is pushed out). */
const MAX_HEADS = 1_000;

/** The heads of this process's runs, by thread (process-wide: every copy of the saver's module shares them). */
function heads(): Map<string, Head> {
  return singleton("run-heads", () => new Map<string, Head>());
}

/**
 * Forget what this process kept of the thread's head. An execution of a run starts with it: a run handed over after a
 * database fault and continued here (same run id, same thread) must not end on the head its first execution held —
 * that head's last checkpoint may never have been stored, and the continuation wrote its own from the last stored one.
 */
export function forgetRunHead(threadId: string): void {
  heads().delete(threadId);
}

/** The run's first read of its thread's latest root checkpoint (`row`, or none): what its writes build on. */
export function seedRunHead(threadId: string, runId: string, row: TupleRow | undefined): void {
  const all = heads();
  all.delete(threadId);
  if (all.size >= MAX_HEADS) all.delete(all.keys().next().value as string);
  const blobs = new Map<string, Blob>();
  let checkpoint: Head["checkpoint"] = null;
  if (row) {
    const versions =
      (JSON.parse(row.checkpoint) as { channel_versions?: Record<string, unknown> }).channel_versions ?? {};
    const stored = new Map((row.blob_channels ?? []).map((channel, i) => [channel, i]));
    // A channel with no row at its version is one the checkpoint left empty (the saver writes none for it).
    for (const [channel, version] of Object.entries(versions)) {
      const i = stored.get(channel) ?? -1;
      blobs.set(channel, {
        version: String(version),
        type: row.blob_types?.[i] ?? "empty",
        value: row.blob_values?.[i] ?? null,
      });
    }
    checkpoint = {
      id: row.checkpoint_id,
      parentId: row.parent_checkpoint_id,
      checkpoint: row.checkpoint,
      metadata: row.metadata,
    };
  }
  const seeded = row
    ? {
        id: row.checkpoint_id,
        writes: (row.write_task_ids ?? []).map((taskId, i) => ({
          taskPath: "",
          taskId,
          idx: i,
          channel: row.write_channels?.[i] ?? "",
          type: row.write_types?.[i] ?? "json",
          value: row.write_values?.[i] ?? new Uint8Array(),
        })),
      }
    : null;
  const unknown = row ? (row.send_values?.length ?? 0) > 0 : false;
  all.set(threadId, { runId, blobs, checkpoint, seeded, writes: new Map(), unknown });
}

/** A checkpoint the run put (root namespace), with the channel values it changed. */
export function noteRunCheckpoint(
  threadId: string,
  runId: string,
  put: {
    checkpointId: string;
    parentId: string | null;
    checkpoint: string;
    metadata: string;
    blobs: readonly { channel: string; version: string; type: string; value: Uint8Array | null }[];
  },
): void {
  const head = heads().get(threadId);
  if (!head || head.runId !== runId) return;
  for (const b of put.blobs) head.blobs.set(b.channel, { version: b.version, type: b.type, value: b.value });
  head.checkpoint = {
    id: put.checkpointId,
    parentId: put.parentId,
    checkpoint: put.checkpoint,
    metadata: put.metadata,
  };
}

/** A task's writes the run put against a checkpoint (root namespace), with the batch's upsert rule. */
export function noteRunWrites(
  threadId: string,
  runId: string,
  checkpointId: string,
  taskId: string,
  taskPath: string,
  upsert: boolean,
  writes: readonly { idx: number; channel: string; type: string; value: Uint8Array }[],
): void {
  const head = heads().get(threadId);
  if (!head || head.runId !== runId) return;
  let own = head.writes.get(checkpointId);
  if (!own) {
    own = new Map();
    head.writes.set(checkpointId, own);
  }
  for (const w of writes) {
    // Byte order of (task path, task, idx), as the database returns them; idx is negative for special writes.
    const key = `${taskPath}\u0000${taskId}\u0000${String(w.idx + 1_000_000).padStart(8, "0")}`;
    if (own.has(key) && !upsert) continue;
    own.set(key, { taskPath, taskId, idx: w.idx, channel: w.channel, type: w.type, value: w.value });
  }
}

/**
 * The latest root checkpoint the run wrote, with its pending writes, as the database would return it — once; then
 * forgotten. Undefined when it is not known exactly (read the database).
 */
export function takeRunHead(threadId: string, runId: string): TupleRow | undefined {
  const all = heads();
  const head = all.get(threadId);
  if (!head || head.runId !== runId) return undefined;
  all.delete(threadId);
  const cp = head.checkpoint;
  if (head.unknown || !cp) return undefined;
  const versions =
    (JSON.parse(cp.checkpoint) as { channel_versions?: Record<string, unknown> }).channel_versions ?? {};
  const channels: string[] = [];
  const types: string[] = [];
  const values: (Uint8Array | null)[] = [];
  for (const [channel, version] of Object.entries(versions)) {
    const blob = head.blobs.get(channel);
    if (!blob || blob.version !== String(version)) return undefined;
    if (blob.type === "empty") continue; // the database holds no row for it
    channels.push(channel);
    types.push(blob.type);
    values.push(blob.value);
  }
  const own = head.writes.get(cp.id);
  let writes: Write[];
  if (head.seeded?.id === cp.id) {
    // Still at the checkpoint it started from: its writes read back then carry no task path, so new ones beside
    // them could not be placed as the database would place them.
    if (own && own.size > 0) return undefined;
    writes = head.seeded.writes;
  } else {
    writes = [...(own ?? new Map<string, Write>()).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, w]) => w);
  }
  return {
    thread_id: threadId,
    checkpoint_ns: "",
    checkpoint_id: cp.id,
    parent_checkpoint_id: cp.parentId,
    checkpoint: cp.checkpoint,
    metadata: cp.metadata,
    blob_channels: channels.length > 0 ? channels : null,
    blob_types: types.length > 0 ? types : null,
    blob_values: values.length > 0 ? values : null,
    write_task_ids: writes.length > 0 ? writes.map((w) => w.taskId) : null,
    write_channels: writes.length > 0 ? writes.map((w) => w.channel) : null,
    write_types: writes.length > 0 ? writes.map((w) => w.type) : null,
    write_values: writes.length > 0 ? writes.map((w) => w.value) : null,
    send_types: null,
    send_values: null,
  };
}
