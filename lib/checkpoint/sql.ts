import { TASKS } from "@langchain/langgraph-checkpoint";
import { getTableName } from "drizzle-orm";
import { checkpointBlobs, checkpoints, checkpointWrites } from "@/lib/db/schema";

/*
 * Every saver method is ONE statement: a single statement is atomic, so there is no BEGIN/COMMIT pair, and each call
 * costs one round trip. Table names come from the Drizzle schema, which owns the tables and their migrations.
 */
const CP = `"${getTableName(checkpoints)}"`;
const BL = `"${getTableName(checkpointBlobs)}"`;
const WR = `"${getTableName(checkpointWrites)}"`;

/** Columns of a checkpoint tuple as read by {@link selectTuplesSql}. */
export interface TupleRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint: string;
  metadata: string;
  blob_channels: string[] | null;
  blob_types: string[] | null;
  blob_values: (Uint8Array | null)[] | null;
  write_task_ids: string[] | null;
  write_channels: string[] | null;
  write_types: (string | null)[] | null;
  write_values: Uint8Array[] | null;
  send_types: (string | null)[] | null;
  send_values: Uint8Array[] | null;
}

/**
 * Checkpoint tuples with their channel values, pending writes and (for checkpoints older than format v4) the pending
 * sends stored on the parent — all in one statement. The inner query picks the checkpoints (using the primary key);
 * the lateral joins read blobs by their exact (thread, ns, channel, version) key, never a whole thread's blobs.
 */
export function selectTuplesSql(where: string, limitParam: string | null): string {
  return `SELECT cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id, cp.parent_checkpoint_id,
  cp.checkpoint::text AS checkpoint, cp.metadata::text AS metadata,
  bl.channels AS blob_channels, bl.types AS blob_types, bl.blobs AS blob_values,
  wr.task_ids AS write_task_ids, wr.channels AS write_channels, wr.types AS write_types, wr.blobs AS write_values,
  ps.types AS send_types, ps.blobs AS send_values
FROM (
  SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
  FROM ${CP} ${where} ORDER BY checkpoint_id DESC${limitParam ? ` LIMIT ${limitParam}` : ""}
) cp
LEFT JOIN LATERAL (
  SELECT array_agg(b.channel) AS channels, array_agg(b.type) AS types, array_agg(b.blob) AS blobs
  FROM jsonb_each_text(cp.checkpoint -> 'channel_versions') AS v(channel, version)
  JOIN ${BL} b ON b.thread_id = cp.thread_id AND b.checkpoint_ns = cp.checkpoint_ns
    AND b.channel = v.channel COLLATE "C" AND b.version = v.version COLLATE "C"
) bl ON true
LEFT JOIN LATERAL (
  SELECT array_agg(w.task_id ORDER BY w.task_path, w.task_id, w.idx) AS task_ids,
    array_agg(w.channel ORDER BY w.task_path, w.task_id, w.idx) AS channels,
    array_agg(w.type ORDER BY w.task_path, w.task_id, w.idx) AS types,
    array_agg(w.blob ORDER BY w.task_path, w.task_id, w.idx) AS blobs
  FROM ${WR} w
  WHERE w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns AND w.checkpoint_id = cp.checkpoint_id
) wr ON true
LEFT JOIN LATERAL (
  SELECT array_agg(w.type ORDER BY w.task_path, w.task_id, w.idx) AS types,
    array_agg(w.blob ORDER BY w.task_path, w.task_id, w.idx) AS blobs
  FROM ${WR} w
  WHERE (cp.checkpoint ->> 'v')::int < 4 AND cp.parent_checkpoint_id IS NOT NULL
    AND w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
    AND w.checkpoint_id = cp.parent_checkpoint_id AND w.channel = '${TASKS}'
) ps ON true
ORDER BY cp.checkpoint_id DESC`;
}

/** Latest checkpoint of (thread, ns): $1 thread, $2 ns. */
export const SELECT_LATEST_TUPLE = selectTuplesSql("WHERE thread_id = $1 AND checkpoint_ns = $2", "1");
/** One checkpoint: $1 thread, $2 ns, $3 checkpoint id. */
export const SELECT_TUPLE_BY_ID = selectTuplesSql(
  "WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
  null,
);

/*
 * Values travel as ONE bytea parameter (the concatenation) plus per-row offsets and lengths (-1 = NULL): `pg` sends
 * a Buffer parameter in binary, whereas a bytea[] parameter goes as hex text, twice the size and slow to build.
 */
const SLICE = `CASE WHEN x.len < 0 THEN NULL ELSE substring($BLOB::bytea FROM x.off + 1 FOR x.len) END`;

/**
 * Insert the changed channel values and upsert the checkpoint row in one statement.
 * $1 thread, $2 ns, $3 channels[], $4 versions[], $5 types[], $6 blobs (concatenated), $7 lengths[], $8 offsets[],
 * $9 checkpoint id, $10 parent id, $11 checkpoint json, $12 metadata json.
 */
export const UPSERT_CHECKPOINT = `WITH new_blobs AS (
  INSERT INTO ${BL} (thread_id, checkpoint_ns, channel, version, type, blob)
  SELECT $1, $2, x.channel, x.version, x.type, ${SLICE.replace("$BLOB", "$6")}
  FROM unnest($3::text[], $4::text[], $5::text[], $7::int[], $8::int[]) AS x(channel, version, type, len, off)
  ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
INSERT INTO ${CP} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES ($1, $2, $9, $10, $11::jsonb, $12::jsonb)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`;

function writesSql(onConflict: string): string {
  return `INSERT INTO ${WR} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, $2, $3, $4, $5, x.idx, x.channel, x.type, ${SLICE.replace("$BLOB", "$9")}
FROM unnest($6::int[], $7::text[], $8::text[], $10::int[], $11::int[]) AS x(idx, channel, type, len, off)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}`;
}

/**
 * Regular writes are kept as first written (a task re-run after a crash must not replace what was recorded);
 * special writes — errors, interrupts, resume values, all with negative idx — replace the previous one.
 * $1 thread, $2 ns, $3 checkpoint id, $4 task id, $5 task path, $6 idx[], $7 channels[], $8 types[],
 * $9 blobs (concatenated), $10 lengths[], $11 offsets[].
 */
export const INSERT_WRITES = writesSql("DO NOTHING");
export const UPSERT_WRITES = writesSql(
  "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob, task_path = EXCLUDED.task_path",
);

/** Concatenate values for one bytea parameter, with their lengths (-1 for NULL) and offsets. */
export function packBlobs(blobs: readonly (Uint8Array | null)[]): {
  packed: Buffer;
  lengths: number[];
  offsets: number[];
} {
  const lengths: number[] = [];
  const offsets: number[] = [];
  let total = 0;
  for (const blob of blobs) {
    offsets.push(total);
    lengths.push(blob ? blob.byteLength : -1);
    total += blob ? blob.byteLength : 0;
  }
  const packed = Buffer.allocUnsafe(total);
  let at = 0;
  for (const blob of blobs) {
    if (!blob) continue;
    packed.set(blob, at);
    at += blob.byteLength;
  }
  return { packed, lengths, offsets };
}

/** Everything of one thread, every namespace: $1 thread. */
export const DELETE_THREAD = `WITH deleted_blobs AS (
  DELETE FROM ${BL} WHERE thread_id = $1
), deleted_writes AS (
  DELETE FROM ${WR} WHERE thread_id = $1
)
DELETE FROM ${CP} WHERE thread_id = $1`;
