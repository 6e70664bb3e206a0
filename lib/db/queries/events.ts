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
function eventJson(event: Record<string, unknown>): string {
  return JSON.stringify(event).replaceAll("\\u0000", "\\ufffd");
}

/** Channel on which every append is announced to the other server instances (LISTEN/NOTIFY). */
export const EVENTS_CHANNEL = "hitl_events";

/**
 * Append a run's events to its thread's log, move `threads.last_seq`, and announce the append on
 * {@link EVENTS_CHANNEL} (delivered to other instances at commit) — one statement. Only the run's current owner may
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
    UPDATE threads SET last_seq = ${last.seq}, updated_at = now()
    WHERE id = ${threadId} AND EXISTS (SELECT 1 FROM owned)
    RETURNING 1
  ), announced AS (
    SELECT pg_notify(${EVENTS_CHANNEL}, ${`${owner}|${threadId}|${last.seq}`}) WHERE EXISTS (SELECT 1 FROM owned)
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
