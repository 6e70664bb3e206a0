import "server-only";
import { sql } from "drizzle-orm";
import type { Thread } from "../schema";
import type { Queryable } from "../tx";
import { rowSealer } from "../vault";
import { sealedDecisionFields, waitMsOf } from "./decisions";
import { EVENTS_CHANNEL, eventSerializer, type LoggedEvent } from "./events";
import { contextOrderUpdate } from "./threads";

/** A pending decision a run leaves behind, as the inbox lists it. */
export interface PendingDecisionRow {
  interruptId: string;
  action: string;
  payload: unknown;
  title: string | null;
  orderId: string | null;
  customerName: string | null;
  amountCents: number | null;
  currency: string | null;
  /** The policy's findings the question shows (codes and words, no personal data), for the inbox row. */
  findings?: { code: string; severity: string; message: string }[] | null;
}

export interface RunClose {
  threadId: string;
  runId: string;
  owner: string;
  status: "interrupted" | "succeeded" | "failed" | "cancelled" | "timed_out";
  error?: { code: string; message: string };
  tokens?: { in: number; out: number };
  /** The run's last events, already numbered (at least one: RUN_FINISHED or RUN_ERROR). */
  events: LoggedEvent[];
  threadStatus: Thread["status"];
  /** What the thread turned out to be about (set only when known). */
  contextOrder: string | null;
  /**
   * The decisions the thread's head now waits for, recorded at `checkpointId`; every other open decision of the thread
   * is superseded. `null`: the run left no head to wait at (it failed or stopped), so nothing is recorded and nothing
   * superseded — unless the thread failed, which waits for nothing: then every open decision is superseded.
   */
  head: { checkpointId: string; decisions: PendingDecisionRow[] } | null;
  /** The production build whose code asked the head's decisions (null: not known). */
  build?: string | null;
  /**
   * A run that ends asking nothing must not end while the ledger still waits for a decision of the thread: then
   * nothing is written (`closed: false`) and `pending` names those decisions.
   */
  refuseIfPending?: boolean;
}

/**
 * Close a run in one statement, only if `owner` still holds it active: the run row, its last events and the
 * thread's `last_seq`, the decisions its head waits for, the supersession of every other open decision, the thread's
 * status, and the announcement to other instances following the thread. A statement is atomic, so a run lost to
 * another owner writes nothing at all (`closed: false`).
 *
 * `inputWaiting` says whether input waits in the thread's queue. The statement's snapshot is taken before it locks
 * the thread's row, so input queued by a claim that held that row (and committed while this waited) is not in it.
 * Queuing input touches the thread's row (`enqueueInput`), so the row this statement locks is then a newer version
 * than its snapshot's: the answer is `undefined` ("not known": read the queue after the commit). Otherwise it is
 * exact — a claim that takes the row after this statement waits for its commit and sees the run ended.
 */
export async function closeRun(
  db: Queryable,
  close: RunClose,
): Promise<{ closed: boolean; inputWaiting: boolean | undefined; pending?: string[] }> {
  const { threadId, runId, owner, events: batch, head } = close;
  const pendingHere = sql`SELECT interrupt_id FROM decisions WHERE thread_id = ${threadId} AND status = 'pending'`;
  const unlessPending = close.refuseIfPending ? sql` AND NOT EXISTS (${pendingHere})` : sql``;
  const last = batch[batch.length - 1];
  if (!last) throw new Error("closeRun: a run ends with at least one event");
  // A run that failed or was stopped leaves no decision pending: what it asked is superseded.
  const failed = close.threadStatus === "failed" || close.threadStatus === "stopped";
  const recorded = head?.decisions ?? [];
  const keep = failed ? [] : recorded.map((d) => d.interruptId);
  const supersede = failed || head !== null;
  const tokens = close.tokens
    ? sql`, tokens_in = tokens_in + ${close.tokens.in}, tokens_out = tokens_out + ${close.tokens.out}`
    : sql``;
  const contextOrder = close.contextOrder
    ? sql`, context_order = ${contextOrderUpdate(close.contextOrder)}`
    : sql``;
  const serialize = await eventSerializer(db, threadId);
  // The decisions' questions are sealed under the thread's key like its events (lib/db/queries/decisions.ts).
  const sealer = recorded.length > 0 ? await rowSealer(db, threadId, "mark") : null;
  // The run's error, as its events (a tool's message can name the customer): sealed under the thread's key.
  const errorMessage = close.error
    ? (await rowSealer(db, threadId, "mark", "sealed-records")).text(close.error.message)
    : null;
  const asked = sealer
    ? recorded.map((d) => ({
        ...sealedDecisionFields(sealer, { ...d }),
        waitMs: waitMsOf(d.action, d.payload),
      }))
    : [];
  const result = await db.execute(sql`WITH closed AS (
    UPDATE runs SET status = ${close.status}, error_code = ${close.error?.code ?? null},
      error_message = ${errorMessage}, finished_at = now(), lease_expires_at = NULL${tokens}
    WHERE id = ${runId} AND owner = ${owner} AND status IN ('queued', 'running')${unlessPending}
    RETURNING 1
  ), inserted AS (
    INSERT INTO events (thread_id, seq, run_id, type, event)
    SELECT ${threadId}, x.seq, x.run_id, x.type, x.event
    FROM unnest(${sql.param(batch.map((e) => e.seq))}::bigint[], ${sql.param(batch.map((e) => e.runId))}::text[],
      ${sql.param(batch.map((e) => e.type))}::text[], ${sql.param(batch.map((e) => serialize(e.event)))}::jsonb[])
      AS x(seq, run_id, type, event)
    WHERE EXISTS (SELECT 1 FROM closed)
    RETURNING 1
  ), recorded AS (
    INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload, title, order_id,
      customer_name, amount_cents, currency, findings, status, asked_in_build, wait_ms)
    SELECT x.interrupt_id, ${threadId}, ${runId}, ${head?.checkpointId ?? ""}, x.action, x.payload, x.title, x.order_id,
      x.customer_name, x.amount_cents, x.currency, x.findings, ${failed ? "superseded" : "pending"},
      ${close.build ?? null}::text,
      x.wait_ms
    FROM unnest(${sql.param(asked.map((d) => d.interruptId))}::text[],
      ${sql.param(asked.map((d) => d.action))}::text[],
      ${sql.param(asked.map((d) => JSON.stringify(d.payload ?? null)))}::jsonb[],
      ${sql.param(asked.map((d) => d.title))}::text[], ${sql.param(asked.map((d) => d.orderId))}::text[],
      ${sql.param(asked.map((d) => d.customerName))}::text[],
      ${sql.param(asked.map((d) => d.amountCents))}::integer[], ${sql.param(asked.map((d) => d.currency))}::text[],
      ${sql.param(recorded.map((d) => (d.findings?.length ? JSON.stringify(d.findings) : null)))}::jsonb[],
      ${sql.param(asked.map((d) => d.waitMs))}::bigint[])
      AS x(interrupt_id, action, payload, title, order_id, customer_name, amount_cents, currency, findings, wait_ms)
    WHERE EXISTS (SELECT 1 FROM closed)
    ON CONFLICT (interrupt_id) DO NOTHING
    RETURNING 1
  ), superseded AS (
    UPDATE decisions SET status = 'superseded'
    WHERE ${supersede} AND thread_id = ${threadId} AND status IN ('pending', 'answered')
      AND NOT (interrupt_id = ANY(${sql.param(keep)}::text[])) AND EXISTS (SELECT 1 FROM closed)
    RETURNING 1
  ), snap AS (
    SELECT xmin::text AS v FROM threads WHERE id = ${threadId}
  ), locked AS (
    SELECT xmin::text AS v FROM threads WHERE id = ${threadId} AND EXISTS (SELECT 1 FROM closed) FOR UPDATE
  ), moved AS (
    UPDATE threads SET last_seq = ${last.seq}, status = ${close.threadStatus}, updated_at = now()${contextOrder}
    FROM locked WHERE threads.id = ${threadId}
    RETURNING EXISTS (SELECT 1 FROM queued_inputs q WHERE q.thread_id = ${threadId} AND q.status = 'waiting')
      AS input_waiting
  ), announced AS (
    SELECT pg_notify(${EVENTS_CHANNEL}, ${`${owner}|${threadId}|${last.seq}`}) WHERE EXISTS (SELECT 1 FROM closed)
      AND EXISTS (SELECT 1 FROM thread_followers f
        WHERE f.thread_id = ${threadId} AND f.instance_id <> ${owner} AND f.expires_at > now())
  )
  SELECT (SELECT count(*) FROM closed)::int AS closed, (SELECT count(*) FROM inserted)::int AS inserted,
    (SELECT count(*) FROM recorded)::int AS recorded, (SELECT count(*) FROM superseded)::int AS superseded,
    (SELECT bool_or(input_waiting) FROM moved) AS input_waiting, (SELECT count(*) FROM announced)::int AS announced,
    (SELECT v FROM snap) = (SELECT v FROM locked) AS unchanged,
    ${close.refuseIfPending ? sql`(SELECT array_agg(p.interrupt_id ORDER BY p.interrupt_id) FROM (${pendingHere}) p)` : sql`NULL::text[]`} AS pending`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    closed: number;
    input_waiting: boolean | null;
    unchanged: boolean | null;
    pending: string[] | null;
  }[];
  const row = rows[0];
  return {
    closed: (row?.closed ?? 0) === 1,
    inputWaiting: row?.input_waiting === true ? true : row?.unchanged === true ? false : undefined,
    ...(close.refuseIfPending ? { pending: row?.pending ?? [] } : {}),
  };
}
