import "server-only";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import { events } from "../schema";
import type { Queryable } from "../tx";

/** An event ready for the log: its per-thread sequence number and the AG-UI event (already carrying the seq). */
export interface LoggedEvent {
  seq: number;
  runId: string;
  type: string;
  event: Record<string, unknown>;
}

/** jsonb cannot hold U+0000; an event text with one gets the replacement character instead. */
export function eventJson(event: Record<string, unknown>): string {
  return JSON.stringify(event).replaceAll("\\u0000", "\\ufffd");
}

/** Channel on which every append is announced to the other server instances (LISTEN/NOTIFY). */
export const EVENTS_CHANNEL = "hitl_events";

/**
 * Append a run's events to its thread's log, move `threads.last_seq`, and announce the append on
 * {@link EVENTS_CHANNEL} (delivered to other instances at commit) when another instance follows the thread
 * (`thread_followers`; this process's own streams hear it in-process) — one statement. Only the run's current owner may
 * append: a process that lost its claim to the recovery sweeper writes nothing and gets `false`. The primary key
 * (thread, seq) refuses a sequence number used twice.
 */
export async function appendEvents({
  db,
  threadId,
  runId,
  owner,
  batch,
}: {
  db: Queryable;
  threadId: string;
  runId: string;
  owner: string;
  batch: LoggedEvent[];
}): Promise<boolean> {
  if (batch.length === 0) return true;
  const last = batch[batch.length - 1]!;
  const result = await db.execute(sql`WITH owned AS (
    SELECT 1 FROM runs WHERE id = ${runId} AND owner = ${owner} AND status IN ('queued', 'running')
  ), inserted AS (
    INSERT INTO ${events} (thread_id, seq, run_id, type, event)
    SELECT ${threadId}, x.seq, x.run_id, x.type, x.event
    FROM unnest(${sql.param(batch.map((e) => e.seq))}::bigint[], ${sql.param(batch.map((e) => e.runId))}::text[],
      ${sql.param(batch.map((e) => e.type))}::text[], ${sql.param(batch.map((e) => eventJson(e.event)))}::jsonb[])
      AS x(seq, run_id, type, event)
    WHERE EXISTS (SELECT 1 FROM owned)
    RETURNING 1
  ), moved AS (
    UPDATE threads SET last_seq = ${last.seq}
    WHERE id = ${threadId} AND EXISTS (SELECT 1 FROM owned)
    RETURNING 1
  ), announced AS (
    SELECT pg_notify(${EVENTS_CHANNEL}, ${`${owner}|${threadId}|${last.seq}`}) WHERE EXISTS (SELECT 1 FROM owned)
      AND EXISTS (SELECT 1 FROM thread_followers f
        WHERE f.thread_id = ${threadId} AND f.instance_id <> ${owner} AND f.expires_at > now())
  )
  SELECT (SELECT count(*) FROM inserted)::int AS inserted, (SELECT count(*) FROM moved)::int AS moved,
    (SELECT count(*) FROM announced)::int AS announced`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    inserted: number;
  }[];
  return (rows[0]?.inserted ?? 0) === batch.length;
}

/** Logged events of a thread after `afterSeq`, oldest first. */
export async function readEvents({
  db,
  threadId,
  afterSeq,
  limit = 500,
}: {
  db: Queryable;
  threadId: string;
  afterSeq: number;
  limit?: number;
}): Promise<LoggedEvent[]> {
  const rows = await db
    .select({ seq: events.seq, runId: events.runId, type: events.type, event: events.event })
    .from(events)
    .where(and(eq(events.threadId, threadId), gt(events.seq, afterSeq)))
    .orderBy(asc(events.seq))
    .limit(limit);
  return rows.map((r) => ({ ...r, seq: Number(r.seq), event: r.event as Record<string, unknown> }));
}

/** The events one run logged so far, in order (a recovered run reads what its crashed owner left open). */
export async function readRunEvents({
  db,
  threadId,
  runId,
}: {
  db: Queryable;
  threadId: string;
  runId: string;
}): Promise<LoggedEvent[]> {
  const rows = await db
    .select({ seq: events.seq, runId: events.runId, type: events.type, event: events.event })
    .from(events)
    .where(and(eq(events.threadId, threadId), eq(events.runId, runId)))
    .orderBy(asc(events.seq));
  return rows.map((r) => ({ ...r, seq: Number(r.seq), event: r.event as Record<string, unknown> }));
}

function resultRows<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/**
 * Compact the event log of a thread's finished runs (every run not queued/running), in one statement: each text
 * message's START, CONTENT… and END become one `TEXT_MESSAGE_CHUNK` (AG-UI's one-event form of a message) at the
 * START's seq, each tool call's START, ARGS… and END one `TOOL_CALL_CHUNK`; of the runs' `MESSAGES_SNAPSHOT` and
 * `STATE_SNAPSHOT` events only the last of each stays (it holds what the earlier ones held); the other events stay as
 * they are. Seqs keep their order (what goes leaves gaps); `threads.events_compacted_seq` moves to the last seq of those runs,
 * and readers asked for anything before it answer with a snapshot (see {@link readCompactionSnapshot}). Idempotent.
 * Returns the events deleted and the new compacted seq.
 */
export async function compactThreadEvents({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<{ eventsDeleted: number; compactedSeq: number }> {
  const [row] = resultRows<{ deleted: number; compacted: string | null }>(
    await db.execute(sql`WITH done AS (
      SELECT id FROM runs WHERE thread_id = ${threadId} AND status NOT IN ('queued', 'running')
    ), parts AS (
      SELECT e.seq, e.run_id, e.type, e.event,
        CASE WHEN e.type LIKE 'TEXT_MESSAGE_%' THEN 'm:' || (e.event ->> 'messageId')
          ELSE 't:' || (e.event ->> 'toolCallId') END AS k
      FROM events e
      WHERE e.thread_id = ${threadId} AND e.run_id IN (SELECT id FROM done)
        AND e.type IN ('TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END',
          'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END')
    ), groups AS (
      SELECT run_id, k, min(seq) AS keep,
        string_agg(event ->> 'delta', '' ORDER BY seq) FILTER (WHERE type IN ('TEXT_MESSAGE_CONTENT', 'TOOL_CALL_ARGS'))
          AS delta,
        (array_agg(event ORDER BY seq) FILTER (WHERE type IN ('TEXT_MESSAGE_START', 'TOOL_CALL_START')))[1] AS head
      FROM parts GROUP BY run_id, k
      HAVING count(*) FILTER (WHERE type IN ('TEXT_MESSAGE_START', 'TOOL_CALL_START')) = 1
    ), merged AS (
      UPDATE events e SET
        type = CASE WHEN g.k LIKE 'm:%' THEN 'TEXT_MESSAGE_CHUNK' ELSE 'TOOL_CALL_CHUNK' END,
        event = (g.head - 'type') || jsonb_build_object(
          'type', CASE WHEN g.k LIKE 'm:%' THEN 'TEXT_MESSAGE_CHUNK' ELSE 'TOOL_CALL_CHUNK' END,
          'delta', coalesce(g.delta, ''))
      FROM groups g WHERE e.thread_id = ${threadId} AND e.seq = g.keep
      RETURNING 1
    ), deleted AS (
      DELETE FROM events e USING parts p JOIN groups g ON g.run_id = p.run_id AND g.k = p.k
      WHERE e.thread_id = ${threadId} AND e.seq = p.seq AND p.seq > g.keep
      RETURNING 1
    ), superseded AS (
      -- Earlier runs' MESSAGES_SNAPSHOT / STATE_SNAPSHOT: the last one of each holds everything they held, and a
      -- reader of the compacted range is answered with that last one.
      DELETE FROM events e USING (
        SELECT type, max(seq) AS last FROM events
        WHERE thread_id = ${threadId} AND run_id IN (SELECT id FROM done)
          AND type IN ('MESSAGES_SNAPSHOT', 'STATE_SNAPSHOT')
        GROUP BY type
      ) l
      WHERE e.thread_id = ${threadId} AND e.run_id IN (SELECT id FROM done) AND e.type = l.type AND e.seq < l.last
      RETURNING 1
    ), horizon AS (
      SELECT max(seq) AS seq FROM events WHERE thread_id = ${threadId} AND run_id IN (SELECT id FROM done)
    ), moved AS (
      UPDATE threads SET events_compacted_seq = greatest(events_compacted_seq, (SELECT seq FROM horizon))
      WHERE id = ${threadId} AND (SELECT seq FROM horizon) IS NOT NULL
      RETURNING events_compacted_seq
    )
    SELECT ((SELECT count(*) FROM deleted) + (SELECT count(*) FROM superseded))::int AS deleted,
      (SELECT count(*) FROM merged)::int AS merged,
      (SELECT events_compacted_seq FROM moved)::text AS compacted`),
  );
  return { eventsDeleted: row?.deleted ?? 0, compactedSeq: Number(row?.compacted ?? 0) };
}

/**
 * What a reader asking for events before a thread's compacted seq gets instead of them: the latest `RUN_STARTED`,
 * `MESSAGES_SNAPSHOT`, `STATE_SNAPSHOT` and `RUN_FINISHED`/`RUN_ERROR` at or before `compactedSeq`, in that order,
 * each carrying `compactedSeq` as its seq (the reader goes on after it). Empty when the log holds none of them.
 */
export async function readCompactionSnapshot({
  db,
  threadId,
  compactedSeq,
}: {
  db: Queryable;
  threadId: string;
  compactedSeq: number;
}): Promise<LoggedEvent[]> {
  const rows = resultRows<{ run_id: string; type: string; event: Record<string, unknown>; ord: number }>(
    await db.execute(sql`SELECT x.run_id, x.type, x.event, k.ord FROM (VALUES
        (1, ARRAY['RUN_STARTED']), (2, ARRAY['MESSAGES_SNAPSHOT']), (3, ARRAY['STATE_SNAPSHOT']),
        (4, ARRAY['RUN_FINISHED', 'RUN_ERROR'])) AS k(ord, types)
      CROSS JOIN LATERAL (
        SELECT e.run_id, e.type, e.event FROM events e
        WHERE e.thread_id = ${threadId} AND e.seq <= ${compactedSeq} AND e.type = ANY (k.types)
        ORDER BY e.seq DESC LIMIT 1
      ) x
      ORDER BY k.ord`),
  );
  return rows.map((r) => {
    const metadata = {
      ...((r.event.metadata as Record<string, unknown> | undefined) ?? {}),
      seq: compactedSeq,
    };
    return { seq: compactedSeq, runId: r.run_id, type: r.type, event: { ...r.event, metadata } };
  });
}
