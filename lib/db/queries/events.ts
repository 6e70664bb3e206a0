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

/**
 * Append events to a thread's log and move `threads.last_seq`, in one statement. The primary key (thread, seq)
 * refuses a sequence number used twice.
 */
export async function appendEvents({
  db,
  threadId,
  batch,
}: {
  db: Queryable;
  threadId: string;
  batch: LoggedEvent[];
}): Promise<void> {
  if (batch.length === 0) return;
  const last = batch[batch.length - 1]!;
  await db.execute(sql`WITH inserted AS (
    INSERT INTO ${events} (thread_id, seq, run_id, type, event)
    SELECT ${threadId}, x.seq, x.run_id, x.type, x.event
    FROM unnest(${sql.param(batch.map((e) => e.seq))}::bigint[], ${sql.param(batch.map((e) => e.runId))}::text[],
      ${sql.param(batch.map((e) => e.type))}::text[], ${sql.param(batch.map((e) => eventJson(e.event)))}::jsonb[])
      AS x(seq, run_id, type, event)
  )
  UPDATE threads SET last_seq = ${last.seq}, updated_at = now() WHERE id = ${threadId}`);
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
