import "server-only";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import { rowsOf } from "../rows";
import { events } from "../schema";
import type { Queryable } from "../tx";
import { isErasedValue, openThreadJson, rowSealer } from "../vault";

/*
 * A logged event carries the customer's and the staff's words (messages, tool arguments, state, questions): it is
 * stored sealed under its thread's subject key (lib/db/vault.ts); its type, seq and run stay plain. Every write goes
 * through {@link eventSerializer}; every read opens (an event sealed under a destroyed key reads as
 * {@link ERASED_EVENT}).
 */

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

/** Turns an event of one thread into the JSON its log stores (see above). */
export type EventSerializer = (event: Record<string, unknown>) => string;

/**
 * The serializer of `threadId`'s events now: sealed under its subject's key, in clear when the thread has none (or
 * mid-rollout). The subject erased while a run of the thread was under way: its last events are logged as
 * {@link ERASED_EVENT} (the run still ends, its seqs stay whole), never in clear.
 */
export async function eventSerializer(db: Queryable, threadId: string): Promise<EventSerializer> {
  const sealer = await rowSealer(db, threadId, "mark");
  return (event) => {
    const stored = sealer.json(event);
    if (stored === event) return eventJson(event);
    return JSON.stringify(isErasedValue(stored) ? ERASED_EVENT : stored);
  };
}

/**
 * What an event sealed under a destroyed key reads as: an AG-UI custom event a client passes over, in its place (the
 * log keeps its seqs; a reader's paging is unchanged).
 */
export const ERASED_EVENT: Readonly<Record<string, unknown>> = Object.freeze({
  type: "CUSTOM",
  name: "erased",
  value: null,
});

/** Logged events as stored, opened (see {@link ERASED_EVENT}). */
async function openEvents<T extends { event: unknown }>(
  db: Queryable,
  threadId: string,
  rows: readonly T[],
): Promise<(T & { event: Record<string, unknown> })[]> {
  const out: (T & { event: Record<string, unknown> })[] = [];
  for (const row of rows) {
    const event = await openThreadJson(db, threadId, row.event);
    out.push({
      ...row,
      event: isErasedValue(event) ? { ...ERASED_EVENT } : (event as Record<string, unknown>),
    });
  }
  return out;
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
  const serialize = await eventSerializer(db, threadId);
  const result = await db.execute(sql`WITH owned AS (
    SELECT 1 FROM runs WHERE id = ${runId} AND owner = ${owner} AND status IN ('queued', 'running')
  ), inserted AS (
    INSERT INTO ${events} (thread_id, seq, run_id, type, event)
    SELECT ${threadId}, x.seq, x.run_id, x.type, x.event
    FROM unnest(${sql.param(batch.map((e) => e.seq))}::bigint[], ${sql.param(batch.map((e) => e.runId))}::text[],
      ${sql.param(batch.map((e) => e.type))}::text[], ${sql.param(batch.map((e) => serialize(e.event)))}::jsonb[])
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
  return (await openEvents(db, threadId, rows)).map((r) => ({ ...r, seq: Number(r.seq) }));
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
  return (await openEvents(db, threadId, rows)).map((r) => ({ ...r, seq: Number(r.seq) }));
}

function resultRows<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

const PART_TYPES = [
  "TEXT_MESSAGE_START",
  "TEXT_MESSAGE_CONTENT",
  "TEXT_MESSAGE_END",
  "TOOL_CALL_START",
  "TOOL_CALL_ARGS",
  "TOOL_CALL_END",
] as const;

/**
 * Compact the event log of a thread's finished runs (every run not queued/running), in the caller's transaction (the
 * thread locked): each text message's START, CONTENT… and END become one `TEXT_MESSAGE_CHUNK` (AG-UI's one-event form
 * of a message) at the START's seq, each tool call's START, ARGS… and END one `TOOL_CALL_CHUNK`; of the runs'
 * `MESSAGES_SNAPSHOT` and `STATE_SNAPSHOT` events only the last of each stays (it holds what the earlier ones held);
 * the other events stay as they are. Seqs keep their order (what goes leaves gaps); `threads.events_compacted_seq`
 * moves to the last seq of those runs, and readers asked for anything before it answer with a snapshot (see
 * {@link readCompactionSnapshot}). The merge reads the events opened and writes the chunk sealed again (events are
 * sealed, see above); events under a destroyed key are left as they are. Idempotent. Returns the events deleted and the
 * new compacted seq.
 */
export async function compactThreadEvents({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<{ eventsDeleted: number; compactedSeq: number }> {
  const done = sql`SELECT id FROM runs WHERE thread_id = ${threadId} AND status NOT IN ('queued', 'running')`;
  const parts = await openEvents(
    db,
    threadId,
    rowsOf<{ seq: string; run_id: string; type: string; event: unknown }>(
      await db.execute(sql`SELECT e.seq::text AS seq, e.run_id, e.type, e.event FROM events e
        WHERE e.thread_id = ${threadId} AND e.run_id IN (${done})
          AND e.type = ANY(${sql.param([...PART_TYPES])}::text[])
        ORDER BY e.seq`),
    ),
  );
  // Each message's or tool call's parts, by run: merged only when it has exactly one start.
  const groups = new Map<
    string,
    { starts: number; seqs: string[]; head?: Record<string, unknown>; delta: string }
  >();
  for (const part of parts) {
    if (part.event.type === "CUSTOM") continue;
    const message = part.type.startsWith("TEXT_MESSAGE_");
    const k = `${part.run_id}|${message ? `m:${String(part.event.messageId)}` : `t:${String(part.event.toolCallId)}`}`;
    const group = groups.get(k) ?? { starts: 0, seqs: [], delta: "" };
    groups.set(k, group);
    group.seqs.push(part.seq);
    if (part.type.endsWith("_START")) {
      group.starts += 1;
      group.head ??= part.event;
    } else if (part.type === "TEXT_MESSAGE_CONTENT" || part.type === "TOOL_CALL_ARGS") {
      group.delta += typeof part.event.delta === "string" ? part.event.delta : "";
    }
  }
  const serialize = await eventSerializer(db, threadId);
  const merged: { seq: string; type: string; event: string }[] = [];
  const dropped: string[] = [];
  for (const group of groups.values()) {
    if (group.starts !== 1 || !group.head) continue;
    const [keep, ...rest] = group.seqs;
    if (keep === undefined) continue;
    const type = group.head.type === "TEXT_MESSAGE_START" ? "TEXT_MESSAGE_CHUNK" : "TOOL_CALL_CHUNK";
    const { type: _start, ...head } = group.head;
    merged.push({ seq: keep, type, event: serialize({ ...head, type, delta: group.delta }) });
    dropped.push(...rest);
  }
  if (merged.length > 0) {
    await db.execute(sql`UPDATE events e SET type = x.type, event = x.event
      FROM unnest(${sql.param(merged.map((m) => m.seq))}::bigint[], ${sql.param(merged.map((m) => m.type))}::text[],
        ${sql.param(merged.map((m) => m.event))}::jsonb[]) AS x(seq, type, event)
      WHERE e.thread_id = ${threadId} AND e.seq = x.seq`);
  }
  const [row] = rowsOf<{ deleted: number; compacted: string | null }>(
    await db.execute(sql`WITH deleted AS (
      DELETE FROM events e WHERE e.thread_id = ${threadId} AND e.seq = ANY(${sql.param(dropped)}::bigint[])
      RETURNING 1
    ), superseded AS (
      -- Earlier runs' MESSAGES_SNAPSHOT / STATE_SNAPSHOT: the last one of each holds everything they held, and a
      -- reader of the compacted range is answered with that last one.
      DELETE FROM events e USING (
        SELECT type, max(seq) AS last FROM events
        WHERE thread_id = ${threadId} AND run_id IN (${done})
          AND type IN ('MESSAGES_SNAPSHOT', 'STATE_SNAPSHOT')
        GROUP BY type
      ) l
      WHERE e.thread_id = ${threadId} AND e.run_id IN (${done}) AND e.type = l.type AND e.seq < l.last
      RETURNING 1
    ), horizon AS (
      SELECT max(seq) AS seq FROM events WHERE thread_id = ${threadId} AND run_id IN (${done})
    ), moved AS (
      UPDATE threads SET events_compacted_seq = greatest(events_compacted_seq, (SELECT seq FROM horizon))
      WHERE id = ${threadId} AND (SELECT seq FROM horizon) IS NOT NULL
      RETURNING events_compacted_seq
    )
    SELECT ((SELECT count(*) FROM deleted) + (SELECT count(*) FROM superseded))::int AS deleted,
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
  const rows = resultRows<{ run_id: string; type: string; event: unknown; ord: number }>(
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
  return (await openEvents(db, threadId, rows)).map((r) => {
    const metadata = {
      ...((r.event.metadata as Record<string, unknown> | undefined) ?? {}),
      seq: compactedSeq,
    };
    return { seq: compactedSeq, runId: r.run_id, type: r.type, event: { ...r.event, metadata } };
  });
}
