import "server-only";
import { sql } from "drizzle-orm";
import { checkpointBlobs, checkpoints, checkpointWrites } from "../schema";
import type { Queryable } from "../tx";
import { statusLiterals, UNDELIVERED_STATUSES } from "./effects";

/*
 * The thread-level SQL of the retention policy (lib/runtime/retention/retention-policy.ts): which threads each step may touch,
 * and what an archived thread is made of. A thread is finished when its status is completed, failed or closed;
 * retention re-checks under the thread's row lock that it has no active run and no pending decision.
 */

/** Thread statuses retention treats as finished. */
export const FINISHED_THREAD_STATUSES = ["completed", "failed", "stopped", "closed"] as const;

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/** The next `limit` finished threads (by id, after `after`) last updated at or before `cutoff`. */
export async function listFinishedThreads({
  db,
  after,
  limit,
  cutoff,
  compactable = false,
}: {
  db: Queryable;
  after: string;
  limit: number;
  cutoff: string;
  /** Only those whose event log has something after its compacted seq. */
  compactable?: boolean;
}): Promise<string[]> {
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT id FROM threads
      WHERE id > ${after} AND status IN ('completed', 'failed', 'stopped', 'closed') AND updated_at <= ${cutoff}::timestamptz
        ${compactable ? sql`AND last_seq > events_compacted_seq` : sql``}
      ORDER BY id LIMIT ${limit}`),
  );
  return rows.map((r) => r.id);
}

/**
 * Whether a locked thread may be changed by retention now: still finished, no active run, no pending decision, and
 * (`quietEffects`) no side effect still to deliver or act on.
 */
export async function isThreadSettled({
  db,
  threadId,
  quietEffects = false,
}: {
  db: Queryable;
  threadId: string;
  quietEffects?: boolean;
}): Promise<boolean> {
  const [row] = rowsOf<{ settled: boolean }>(
    await db.execute(sql`SELECT EXISTS (SELECT 1 FROM threads WHERE id = ${threadId}
        AND status IN ('completed', 'failed', 'stopped', 'closed'))
      AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = ${threadId} AND status IN ('queued', 'running'))
      AND NOT EXISTS (SELECT 1 FROM decisions WHERE thread_id = ${threadId} AND status IN ('pending', 'answered'))
      ${
        quietEffects
          ? sql`AND NOT EXISTS (SELECT 1 FROM effects WHERE thread_id = ${threadId}
              AND status IN (${statusLiterals(UNDELIVERED_STATUSES)}))`
          : sql``
      } AS settled`),
  );
  return row?.settled === true;
}

/**
 * A saver value for the archive: `json` values (the serializer's JSON bytes) as text in `blobText` — readable, and
 * reachable by a later erasure of the archive files — anything else as base64 in `blob`.
 */
function blobFields(alias: string) {
  const t = sql.raw(alias);
  return sql`'blobText', CASE WHEN ${t}.type = 'json' THEN convert_from(${t}.blob, 'UTF8') END,
    'blob', CASE WHEN ${t}.type IS DISTINCT FROM 'json' THEN encode(${t}.blob, 'base64') END`;
}

/**
 * Every row of a thread as it goes to the archive: JSON-safe, one object (saver values: see {@link blobFields}). The
 * thread's search vector stays behind: it is derived from the message, and would be a second copy of its words.
 */
export async function readThreadArchive({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<Record<string, unknown>> {
  const [row] = rowsOf<{ archive: Record<string, unknown> }>(
    await db.execute(sql`SELECT jsonb_build_object(
      'thread', (SELECT to_jsonb(t) - 'search_tsv' FROM threads t WHERE t.id = ${threadId}),
      'runs', (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.created_at), '[]') FROM runs r
        WHERE r.thread_id = ${threadId}),
      'events', (SELECT coalesce(jsonb_agg(to_jsonb(e) ORDER BY e.seq), '[]') FROM events e
        WHERE e.thread_id = ${threadId}),
      'decisions', (SELECT coalesce(jsonb_agg(to_jsonb(d) ORDER BY d.created_at), '[]') FROM decisions d
        WHERE d.thread_id = ${threadId}),
      'effects', (SELECT coalesce(jsonb_agg(to_jsonb(f) ORDER BY f.created_at), '[]') FROM effects f
        WHERE f.thread_id = ${threadId}),
      'checkpoints', (SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.checkpoint_ns, c.checkpoint_id), '[]')
        FROM ${checkpoints} c WHERE c.thread_id = ${threadId}),
      'checkpointBlobs', (SELECT coalesce(jsonb_agg(jsonb_build_object('checkpoint_ns', b.checkpoint_ns,
          'channel', b.channel, 'version', b.version, 'type', b.type, ${blobFields("b")})
          ORDER BY b.checkpoint_ns, b.channel, b.version), '[]')
        FROM ${checkpointBlobs} b WHERE b.thread_id = ${threadId}),
      'checkpointWrites', (SELECT coalesce(jsonb_agg(jsonb_build_object('checkpoint_ns', w.checkpoint_ns,
          'checkpoint_id', w.checkpoint_id, 'task_id', w.task_id, 'idx', w.idx, 'channel', w.channel, 'type', w.type,
          'task_path', w.task_path, ${blobFields("w")})
          ORDER BY w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx), '[]')
        FROM ${checkpointWrites} w WHERE w.thread_id = ${threadId})
    ) AS archive`),
  );
  return row?.archive ?? {};
}

/**
 * Delete an archived thread: its checkpoints, blobs and writes, and the thread row (its runs and events go with it,
 * by foreign key). Decisions, effects, refunds, outbox and audit rows stay. Returns the rows deleted.
 */
export async function deleteArchivedThread({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await db.execute(sql`WITH w AS (DELETE FROM ${checkpointWrites} WHERE thread_id = ${threadId} RETURNING 1),
      b AS (DELETE FROM ${checkpointBlobs} WHERE thread_id = ${threadId} RETURNING 1),
      c AS (DELETE FROM ${checkpoints} WHERE thread_id = ${threadId} RETURNING 1),
      t AS (DELETE FROM threads WHERE id = ${threadId} RETURNING 1)
      SELECT ((SELECT count(*) FROM w) + (SELECT count(*) FROM b) + (SELECT count(*) FROM c)
        + (SELECT count(*) FROM t))::int AS n`),
  );
  return row?.n ?? 0;
}
