import "server-only";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
} from "@langchain/langgraph-checkpoint";
import { AppError } from "@/lib/contract/errors";
import type { SqlClient } from "@/lib/db/sql-client";
import {
  innerType,
  openValue,
  SEALED,
  sealedType,
  sealingAllowed,
  sealValue,
  type ThreadKey,
  threadKey,
} from "@/lib/db/vault";
import { readAddress, requireThread } from "./config";
import { PUSH_PREFIX } from "./history";
import { fromJsonbText, jsonbSafe, toJsonbText } from "./json-text";
import { noteRunCheckpoint, noteRunWrites, seedRunHead, takeRunHead } from "./run-head";
import {
  DELETE_THREAD,
  SELECT_LATEST_TUPLE,
  SELECT_TUPLE_BY_ID,
  selectTuplesSql,
  type TupleRow,
} from "./sql";
import { nextChannelVersion } from "./versions";
import { batcherFor, type CheckpointPut, type WriteBatcher, type WritesPut } from "./write-batch";

const decoder = new TextDecoder();

/**
 * LangGraph checkpointer on the Drizzle-owned tables (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`), for
 * real Postgres through `pg` and for embedded PGlite alike.
 *
 * Differences from `@langchain/langgraph-checkpoint-postgres` that matter:
 * - channel versions are unique sortable strings, so forks of one checkpoint never share a blob key;
 * - `getTuple` and `deleteThread` are one statement each; `put` and `putWrites` are one statement each too, shared by
 *   every write that arrives while an earlier one is on the wire (group commit, `write-batch.ts`);
 * - the task path is stored and pending writes come back ordered by (task_path, task_id, idx);
 * - NUL characters in metadata round-trip instead of being stripped;
 * - the values and writes of a thread with a data subject are sealed under the subject's key (lib/db/vault.ts): the
 *   tables hold `sealed:<type>` and ciphertext, never the agent's state in clear; once the key is destroyed (erasure)
 *   they read as absent (sealing waits, mid-rollout, until every live instance can open what it seals);
 * - no `setup()`: the tables come from the Drizzle migrations.
 */
export class DrizzleCheckpointSaver extends BaseCheckpointSaver {
  /**
   * `stamp` maps `configurable` keys to metadata keys written on every checkpoint put with that config (e.g. the
   * agent version a run executes, or `source: "migration"` for a migration's checkpoint). Off by default (the
   * conformance kit runs without it). `writesVia`: the client whose batcher takes the writes, when `sql` wraps it
   * (a traced client): the batcher is per client, and the run's event sinks use the unwrapped one.
   */
  constructor(
    private readonly sql: SqlClient,
    serde?: SerializerProtocol,
    private readonly stamp: Readonly<Record<string, string>> = {},
    writesVia: SqlClient = sql,
  ) {
    super(serde);
    this.batcher = batcherFor(writesVia);
  }

  /**
   * `put` and `putWrites` go through it (the process's one for this client, shared with the event sinks): writes
   * that meet on the way share one statement and one commit.
   */
  private readonly batcher: WriteBatcher;

  /**
   * The checkpoint tuple at `config`: the exact `checkpoint_id` when given, otherwise the thread's latest in the
   * namespace. Undefined when there is none, or when no thread is named.
   */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { threadId, checkpointNs, checkpointId } = readAddress("getTuple", config);
    if (threadId === undefined) return undefined;
    await this.batcher.settled(threadId);
    const {
      hitl_run_id: runId,
      hitl_head_of_run: headOf,
      defer_writes: deferred,
    } = config.configurable ?? {};
    const latestRoot = !checkpointId && checkpointNs === "";
    // The end of a run that wrote through this saver: its head as it wrote it, without reading it back.
    const own = latestRoot && typeof headOf === "string" ? takeRunHead(threadId, headOf) : undefined;
    if (own) return this.toTuple(own);
    const rows = checkpointId
      ? await this.sql.query<TupleRow>(
          SELECT_TUPLE_BY_ID,
          [threadId, checkpointNs, checkpointId],
          "cp_get_by_id",
        )
      : await this.sql.query<TupleRow>(SELECT_LATEST_TUPLE, [threadId, checkpointNs], "cp_get_latest");
    const row = rows[0];
    // A run's first read of its thread: what its writes will build on (see run-head.ts).
    if (latestRoot && deferred === true && typeof runId === "string") seedRunHead(threadId, runId, row);
    return row ? this.toTuple(row) : undefined;
  }

  /**
   * Checkpoints newest first. Narrowed by thread / namespace / checkpoint id in `config`, by `options.filter`
   * (metadata containment), `options.before` (older than that checkpoint) and `options.limit`.
   */
  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const { filter, before, limit } = options ?? {};
    const configurable = config?.configurable ?? {};
    const { threadId, checkpointId } = readAddress("list", config);
    const wheres: string[] = [];
    const params: unknown[] = [];
    const add = (clause: (p: string) => string, value: unknown) => {
      params.push(value);
      wheres.push(clause(`$${params.length}`));
    };
    if (threadId !== undefined) add((p) => `thread_id = ${p}`, threadId);
    // An absent namespace lists every namespace; an explicit "" is the root namespace only.
    if (configurable.checkpoint_ns !== undefined && configurable.checkpoint_ns !== null) {
      add((p) => `checkpoint_ns = ${p}`, String(configurable.checkpoint_ns));
    }
    if (checkpointId !== undefined) add((p) => `checkpoint_id = ${p}`, checkpointId);
    if (filter && Object.keys(filter).length > 0) add((p) => `metadata @> ${p}::jsonb`, toJsonbText(filter));
    const beforeId = before ? readAddress("list(before)", before).checkpointId : undefined;
    if (beforeId !== undefined) add((p) => `checkpoint_id < ${p}`, beforeId);
    let limitParam: string | null = null;
    if (limit !== undefined) {
      if (!Number.isInteger(limit) || limit < 0)
        throw new Error(`list: limit must be a non-negative integer`);
      params.push(limit);
      limitParam = `$${params.length}`;
    }
    const where = wheres.length > 0 ? `WHERE ${wheres.join(" AND ")}` : "";
    if (threadId !== undefined) await this.batcher.settled(threadId);
    const rows = await this.sql.query<TupleRow>(selectTuplesSql(where, limitParam), params);
    for (const row of rows) yield await this.toTuple(row);
  }

  /**
   * Store a checkpoint and the channel values named in `newVersions`, atomically. Durable when the promise
   * resolves, unless the config defers writes (see `store`). Returns the config that addresses the stored checkpoint.
   */
  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const { threadId, checkpointNs, checkpointId: parentId } = requireThread("put", config);
    const values = checkpoint.channel_values as Record<string, unknown>;
    const key = await this.sealingKey(threadId);
    const blobs = await Promise.all(
      Object.entries(newVersions).map(async ([channel, version]) => {
        if (!(channel in values)) return { channel, version: String(version), type: "empty", value: null };
        const [type, value] = await this.serde.dumpsTyped(values[channel]);
        return { channel, version: String(version), ...sealed(key, type, value) };
      }),
    );
    const { channel_values: _values, ...rest } = checkpoint;
    const item: CheckpointPut = {
      kind: "checkpoint",
      threadId,
      ns: checkpointNs,
      checkpointId: checkpoint.id,
      parentId: parentId ?? null,
      checkpoint: toJsonbText(rest),
      metadata: await this.dumpMetadata(stamped(metadata, config, this.stamp)),
      blobs,
    };
    const runId = ownRun(config, checkpointNs);
    if (runId) noteRunCheckpoint(threadId, runId, item);
    // A channel the checkpoint leaves empty (the start channel, a node's trigger once consumed: ~10 of a refund
    // ticket's ~48 values) gets no row: its version is in `channel_versions`, and a reader finds no row for it at that
    // version, which reads as empty (rows written as `empty` before still read the same).
    await this.store(config, { ...item, blobs: blobs.filter((b) => b.type !== "empty") });
    return {
      configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id },
    };
  }

  /**
   * Store the writes of one task against a checkpoint, atomically. Regular writes keep the first value
   * recorded for (task, idx); a batch made only of special writes (error, interrupt, resume) replaces it.
   */
  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    const { threadId, checkpointNs, checkpointId } = requireThread("putWrites", config);
    if (checkpointId === undefined) {
      throw new Error(
        "putWrites: config.configurable.checkpoint_id is required (writes belong to a checkpoint)",
      );
    }
    if (writes.length === 0) return;
    const key = await this.sealingKey(threadId);
    const serialized = await Promise.all(
      writes.map(async ([channel, value], i) => {
        const [type, bytes] = await this.serde.dumpsTyped(value);
        const stored = sealed(key, type, bytes);
        if (key && channel === "messages" && taskPath.startsWith(PUSH_PREFIX))
          stored.type = sealedType(type, toolNameOf(value));
        return { idx: WRITES_IDX_MAP[channel] ?? i, channel, ...stored };
      }),
    );
    const item: WritesPut = {
      kind: "writes",
      threadId,
      ns: checkpointNs,
      checkpointId,
      taskId,
      taskPath,
      upsert: writes.every(([channel]) => channel in WRITES_IDX_MAP),
      writes: serialized,
    };
    const runId = ownRun(config, checkpointNs);
    if (runId) noteRunWrites(threadId, runId, checkpointId, taskId, taskPath, item.upsert, serialized);
    await this.store(config, item);
  }

  /**
   * Hand a write to the batcher. With `configurable.defer_writes` (a run in LangGraph's "async" durability, see the
   * executor), it resolves as soon as the write is queued: LangGraph chains each `put` after the previous one's
   * promise, so waiting for every commit would send a run's checkpoints one statement each however fast its steps
   * ran. Queued, they leave in order and share statements; the run's end waits for them all and fails on any that
   * failed (`WriteBatcher.settled`), and every read of the thread here waits for them first.
   */
  private async store(config: RunnableConfig, item: CheckpointPut | WritesPut): Promise<void> {
    if (config.configurable?.defer_writes === true) this.batcher.accept(item);
    else await this.batcher.write(item);
  }

  /** Delete every checkpoint, blob and write of a thread, in every namespace, in one statement. */
  async deleteThread(threadId: string): Promise<void> {
    if (typeof threadId !== "string" || threadId === "")
      throw new Error("deleteThread: threadId is required");
    await this.sql.query(DELETE_THREAD, [threadId], "cp_delete_thread");
  }

  /**
   * Unique, sortable string versions (see {@link nextChannelVersion}). LangGraph's runtime accepts string versions
   * (they are compared as text), but `BaseCheckpointSaver`'s type parameter would make this class unusable where a
   * `BaseCheckpointSaver` is expected, so the declared return type stays `number`.
   */
  override getNextVersion(current: string | number | undefined): number {
    return nextChannelVersion(current) as unknown as number;
  }

  /** The key `threadId`'s values are sealed with (null: the thread has no subject). An erased subject's is refused. */
  private async sealingKey(threadId: string): Promise<SealingKey | null> {
    const key = await threadKey(this.sql, threadId);
    if (key === null) return null;
    if (!("erased" in key) && !(await sealingAllowed(this.sql))) return null;
    if ("erased" in key) {
      throw new AppError(
        "conflict:subject_erased",
        "This thread's customer was erased: nothing more is written to its state.",
      );
    }
    return key;
  }

  /**
   * The serializer's value of a stored one: opened first when sealed; `ERASED` when it was sealed under a destroyed
   * key (the caller leaves it out).
   */
  private async load(
    threadId: string,
    type: string,
    blob: Uint8Array | string,
    keys: KeyMemo,
  ): Promise<unknown> {
    if (!type.startsWith(SEALED)) return this.serde.loadsTyped(type, blob);
    keys.key ??= threadKey(this.sql, threadId).then((known) =>
      // Sealed, though this process knew the thread without a subject: sealed since (`npm run keys -- seal`).
      known === null ? threadKey(this.sql, threadId, { fresh: true }) : known,
    );
    const key = await keys.key;
    if (key === null || "erased" in key) return ERASED;
    const bytes = openValue(
      key.key,
      key.subjectId,
      typeof blob === "string" ? Buffer.from(blob, "utf8") : blob,
    );
    return this.serde.loadsTyped(innerType(type), bytes);
  }

  private async dumpMetadata(metadata: CheckpointMetadata): Promise<string> {
    // Through the serializer, so LangChain objects in metadata are written in their revivable form.
    const [, bytes] = await this.serde.dumpsTyped(metadata);
    return jsonbSafe(decoder.decode(bytes));
  }

  private async toTuple(row: TupleRow): Promise<CheckpointTuple> {
    const stored = JSON.parse(fromJsonbText(row.checkpoint)) as Omit<Checkpoint, "channel_values">;
    const channelValues: Record<string, unknown> = {};
    const blobChannels = row.blob_channels ?? [];
    const keys: KeyMemo = {};
    await Promise.all(
      blobChannels.map(async (channel, i) => {
        const type = row.blob_types?.[i];
        const blob = row.blob_values?.[i];
        if (type === undefined || type === "empty" || blob === null || blob === undefined) return;
        const value = await this.load(row.thread_id, type, blob, keys);
        if (value !== ERASED) channelValues[channel] = value;
      }),
    );
    const checkpoint: Checkpoint = {
      ...stored,
      channel_versions: stored.channel_versions ?? {},
      versions_seen: stored.versions_seen ?? {},
      channel_values: channelValues,
    };
    if (checkpoint.v < 4 && row.parent_checkpoint_id !== null)
      await this.migratePendingSends(checkpoint, row);

    const pendingWrites: CheckpointPendingWrite[] = (
      await Promise.all(
        (row.write_task_ids ?? []).map(async (taskId, i): Promise<CheckpointPendingWrite | null> => {
          const value = await this.load(
            row.thread_id,
            row.write_types?.[i] ?? "json",
            row.write_values?.[i] ?? "",
            keys,
          );
          return value === ERASED ? null : [taskId, row.write_channels?.[i] ?? "", value];
        }),
      )
    ).filter((w): w is CheckpointPendingWrite => w !== null);
    const address = { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns };
    return {
      config: { configurable: { ...address, checkpoint_id: row.checkpoint_id } },
      checkpoint,
      metadata: (await this.serde.loadsTyped("json", fromJsonbText(row.metadata))) as CheckpointMetadata,
      parentConfig: row.parent_checkpoint_id
        ? { configurable: { ...address, checkpoint_id: row.parent_checkpoint_id } }
        : undefined,
      pendingWrites,
    };
  }

  /**
   * Checkpoints before format v4 kept `Send`s as writes to the TASKS channel on their parent; v4 keeps them in the
   * checkpoint. Rebuild the channel from the parent's writes (read in the same statement as the checkpoint).
   */
  private async migratePendingSends(checkpoint: Checkpoint, row: TupleRow): Promise<void> {
    const sends = row.send_values;
    if (!sends || sends.length === 0) return;
    const keys: KeyMemo = {};
    const values = (
      await Promise.all(
        sends.map((blob, i) => this.load(row.thread_id, row.send_types?.[i] ?? "json", blob, keys)),
      )
    ).filter((v) => v !== ERASED);
    (checkpoint.channel_values as Record<string, unknown>)[TASKS] = values;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}

/** The tool name a tool task's message write carries (a ToolMessage, or a list of them). */
function toolNameOf(value: unknown): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  const name = (first as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : null;
}

/** A value sealed under a destroyed key. */
const ERASED = Symbol("erased");

/** One thread's key, looked up once per tuple read. */
interface KeyMemo {
  key?: Promise<ThreadKey>;
}

/** A serialized value as stored: sealed (`sealed:<type>`, ciphertext) under its subject's key, or as it is without one. */
function sealed(
  key: SealingKey | null,
  type: string,
  value: Uint8Array,
): { type: string; value: Uint8Array } {
  return key
    ? { type: `${SEALED}${type}`, value: sealValue(key.key, key.subjectId, value) }
    : { type, value };
}

/** The key a thread's values are sealed with, and its subject (what they are bound to). */
interface SealingKey {
  subjectId: string;
  key: Buffer;
}

/** The run whose root-namespace writes these are, when it defers them (its head is kept: run-head.ts). */
function ownRun(config: RunnableConfig, ns: string): string | undefined {
  const { hitl_run_id: runId, defer_writes: deferred } = config.configurable ?? {};
  return ns === "" && deferred === true && typeof runId === "string" ? runId : undefined;
}

/** The metadata with the stamped `configurable` values of `config` written over it (see the constructor). */
function stamped(
  metadata: CheckpointMetadata,
  config: RunnableConfig,
  stamp: Readonly<Record<string, string>>,
): CheckpointMetadata {
  const extra: Record<string, unknown> = {};
  for (const [from, to] of Object.entries(stamp)) {
    const value = config.configurable?.[from];
    if (value !== undefined) extra[to] = value;
  }
  return Object.keys(extra).length > 0 ? ({ ...metadata, ...extra } as CheckpointMetadata) : metadata;
}
