import { TASKS } from "@langchain/langgraph-checkpoint";
import { EVENTS_CHANNEL } from "@/lib/db/queries/events";
import {
  checkpointBlobs,
  checkpoints,
  checkpointWrites,
  events,
  qualifiedName,
  runs,
  threadFollowers,
  threads,
} from "@/lib/db/schema";

/*
 * Every statement here is ONE statement doing all it does: a single statement is atomic, so there is no BEGIN/COMMIT
 * pair, and each costs one round trip (the writes of several saver calls share one: {@link WRITE_BATCH}). Table names come from the Drizzle schema, which owns the tables and their migrations.
 */
const CP = qualifiedName(checkpoints);
const BL = qualifiedName(checkpointBlobs);
const WR = qualifiedName(checkpointWrites);
const EV = qualifiedName(events);
const RUNS = qualifiedName(runs);
const THREADS = qualifiedName(threads);
const FOLLOWERS = qualifiedName(threadFollowers);

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

/**
 * Any number of `put`s and `putWrites` in one statement: one round trip and one commit for all of them (see
 * `write-batch.ts`). Every payload (channel values, written values, checkpoint and metadata JSON) is a slice of the
 * one bytea parameter $1, addressed by (offset, length); a length of -1 is NULL.
 * Checkpoints: $2 thread[], $3 ns[], $4 id[], $5 parent id[], $6 checkpoint offset[], $7 length[], $8 metadata
 * offset[], $9 length[]. Blobs: $10 thread[], $11 ns[], $12 channel[], $13 version[], $14 type[], $15 offset[],
 * $16 length[]. Writes: $17 thread[], $18 ns[], $19 checkpoint id[], $20 task id[], $21 task path[], $22 idx[],
 * $23 channel[], $24 type[], $25 offset[], $26 length[], $27 upsert[] (special writes replace, regular ones keep the
 * first value). Events: $28 thread[], $29 seq[], $30 run[], $31 owner[], $32 type[], $33 offset[], $34 length[]
 * (each run's events are written only while its owner holds it active; each thread's `last_seq` moves to its last
 * event written — `last_seq` alone, so the row is updated in place: see `threads` — announced on the events channel
 * when another instance follows the thread). A batch never holds the same checkpoint or write key twice (Postgres
 * refuses to update one row twice in a statement), so the order of its parts does not matter. Answers `owned`: the
 * runs whose events were written.
 */
export const WRITE_BATCH = `WITH new_blobs AS (
  INSERT INTO ${BL} (thread_id, checkpoint_ns, channel, version, type, blob)
  SELECT x.thread_id, x.ns, x.channel, x.version, x.type, ${slice("x")}
  FROM unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::int[], $16::int[])
    AS x(thread_id, ns, channel, version, type, off, len)
  ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
), new_checkpoints AS (
  INSERT INTO ${CP} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
  SELECT c.thread_id, c.ns, c.id, c.parent,
    convert_from(substring($1::bytea FROM c.cp_off + 1 FOR c.cp_len), 'UTF8')::jsonb,
    convert_from(substring($1::bytea FROM c.md_off + 1 FOR c.md_len), 'UTF8')::jsonb
  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[], $9::int[])
    AS c(thread_id, ns, id, parent, cp_off, cp_len, md_off, md_len)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
  DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
), w AS (
  SELECT * FROM unnest($17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::int[], $23::text[],
    $24::text[], $25::int[], $26::int[], $27::bool[])
    AS w(thread_id, ns, checkpoint_id, task_id, task_path, idx, channel, type, off, len, upsert)
), kept_writes AS (
  INSERT INTO ${WR} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
  SELECT w.thread_id, w.ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, ${slice("w")}
  FROM w WHERE NOT w.upsert
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING
), replaced_writes AS (
  INSERT INTO ${WR} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
  SELECT w.thread_id, w.ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, ${slice("w")}
  FROM w WHERE w.upsert
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
  DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob, task_path = EXCLUDED.task_path
), ev AS (
  SELECT * FROM unnest($28::text[], $29::bigint[], $30::text[], $31::text[], $32::text[], $33::int[], $34::int[])
    AS e(thread_id, seq, run_id, owner, type, off, len)
), owned AS (
  SELECT r.id FROM ${RUNS} r
  WHERE r.id IN (SELECT DISTINCT ev.run_id FROM ev) AND r.status IN ('queued', 'running')
    AND r.owner = (SELECT min(ev.owner) FROM ev WHERE ev.run_id = r.id)
), new_events AS (
  INSERT INTO ${EV} (thread_id, seq, run_id, type, event)
  SELECT ev.thread_id, ev.seq, ev.run_id, ev.type, convert_from(${slice("ev")}, 'UTF8')::jsonb
  FROM ev WHERE ev.run_id IN (SELECT id FROM owned)
), heads AS (
  SELECT ev.thread_id, max(ev.seq) AS seq, min(ev.owner) AS owner
  FROM ev WHERE ev.run_id IN (SELECT id FROM owned) GROUP BY ev.thread_id
), moved AS (
  UPDATE ${THREADS} t SET last_seq = h.seq FROM heads h WHERE t.id = h.thread_id
), announced AS (
  SELECT pg_notify('${EVENTS_CHANNEL}', h.owner || '|' || h.thread_id || '|' || h.seq) FROM heads h
  WHERE EXISTS (SELECT 1 FROM ${FOLLOWERS} f
    WHERE f.thread_id = h.thread_id AND f.instance_id <> h.owner AND f.expires_at > now())
)
SELECT array(SELECT id FROM owned) AS owned, (SELECT count(*) FROM announced)::int AS announced`;

function slice(alias: string): string {
  return `CASE WHEN ${alias}.len < 0 THEN NULL ELSE substring($1::bytea FROM ${alias}.off + 1 FOR ${alias}.len) END`;
}

/** Everything of one thread, every namespace: $1 thread. */
export const DELETE_THREAD = `WITH deleted_blobs AS (
  DELETE FROM ${BL} WHERE thread_id = $1
), deleted_writes AS (
  DELETE FROM ${WR} WHERE thread_id = $1
)
DELETE FROM ${CP} WHERE thread_id = $1`;
