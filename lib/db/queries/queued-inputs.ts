import "server-only";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { MultitaskStrategy } from "@/lib/contract/wire";
import { rowsOf } from "../rows";
import { checkpoints, type QueuedInput, queuedInputs, threads } from "../schema";
import type { Queryable } from "../tx";
import { openThreadJson, sealThreadJson } from "../vault";

/** A queued input as stored: its input sealed under the thread's subject key (like a run's, lib/db/queries/runs.ts). */
async function opened(db: Queryable, row: QueuedInput): Promise<QueuedInput> {
  return { ...row, input: await openThreadJson(db, row.threadId, row.input) };
}

/**
 * Keep new input for after the thread's active run (its thread is locked by the caller). The same statement touches
 * the thread's row (`updated_at`): a run's end racing with it (`closeRun`) sees the row changed under it and knows its
 * own snapshot may have missed this input.
 */
export async function enqueueInput({
  db,
  entry,
}: {
  db: Queryable;
  entry: {
    id: string;
    threadId: string;
    input: unknown;
    strategy: Exclude<MultitaskStrategy, "reject">;
    behindRunId: string | null;
    startedBy: string;
    startedByLabel: string | null;
  };
}): Promise<QueuedInput> {
  const touched = db
    .$with("touched", {})
    .as(db.update(threads).set({ updatedAt: sql`now()` }).where(eq(threads.id, entry.threadId)).getSQL());
  const sealed = { ...entry, input: await sealThreadJson(db, entry.threadId, entry.input) };
  const [row] = await db.with(touched).insert(queuedInputs).values(sealed).returning();
  if (!row) throw new Error("queued input not inserted");
  return { ...row, input: entry.input };
}

/** The thread's inputs still waiting, oldest first. */
export async function listWaitingInputs({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<QueuedInput[]> {
  const rows = await db
    .select()
    .from(queuedInputs)
    .where(and(eq(queuedInputs.threadId, threadId), eq(queuedInputs.status, "waiting")))
    .orderBy(asc(queuedInputs.position));
  return Promise.all(rows.map((row) => opened(db, row)));
}

/** Whether anything waits in the thread's queue (one indexed read). */
export async function hasWaitingInput({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<boolean> {
  const rows = await db
    .select({ id: queuedInputs.id })
    .from(queuedInputs)
    .where(and(eq(queuedInputs.threadId, threadId), eq(queuedInputs.status, "waiting")))
    .limit(1);
  return rows.length > 0;
}

export async function getQueuedInput({
  db,
  id,
}: {
  db: Queryable;
  id: string;
}): Promise<QueuedInput | undefined> {
  const [row] = await db.select().from(queuedInputs).where(eq(queuedInputs.id, id));
  return row && opened(db, row);
}

/** Mark a waiting input started (compare-and-set: false when someone else started or dropped it first). */
export async function markInputStarted({ db, id }: { db: Queryable; id: string }): Promise<boolean> {
  const rows = await db
    .update(queuedInputs)
    .set({ status: "started", startedAt: sql`now()` })
    .where(and(eq(queuedInputs.id, id), eq(queuedInputs.status, "waiting")))
    .returning({ id: queuedInputs.id });
  return rows.length > 0;
}

/** Drop one waiting input (it can never start: its run id is taken). */
export async function dropWaitingInput({ db, id }: { db: Queryable; id: string }): Promise<void> {
  await db
    .update(queuedInputs)
    .set({ status: "dropped" })
    .where(and(eq(queuedInputs.id, id), eq(queuedInputs.status, "waiting")));
}

/** Drop what still waits on these threads (closed: nothing will run on them). */
export async function dropWaitingInputs({
  db,
  threadIds,
}: {
  db: Queryable;
  threadIds: string[];
}): Promise<number> {
  if (threadIds.length === 0) return 0;
  const rows = await db
    .update(queuedInputs)
    .set({ status: "dropped" })
    .where(and(inArray(queuedInputs.threadId, threadIds), eq(queuedInputs.status, "waiting")))
    .returning({ id: queuedInputs.id });
  return rows.length;
}

/**
 * Threads whose queue holds input and that hold no active run: the sweeper starts their next input (the run that
 * would have started it ended on a process that died, or while nothing else woke the queue).
 */
export async function threadsWithIdleQueue({
  db,
  limit = 50,
}: {
  db: Queryable;
  limit?: number;
}): Promise<string[]> {
  const result = await db.execute(sql`SELECT DISTINCT q.thread_id FROM queued_inputs q
    WHERE q.status = 'waiting'
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = q.thread_id AND r.status IN ('queued', 'running'))
      AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.thread_id = q.thread_id AND d.status IN ('pending', 'answered'))
    LIMIT ${limit}`);
  return rowsOf<{ thread_id: string }>(result).map((r) => r.thread_id);
}

/**
 * Rollback: mark every checkpoint the stopped run wrote (metadata `run_id`) abandoned — `abandoned: { run, for }` in
 * its metadata, for the history — and return the checkpoint the run started from, where the new input runs instead.
 * Null when the run wrote nothing, or started the thread (nothing before it to go back to: then it is an interrupt).
 */
export async function abandonRunCheckpoints({
  db,
  threadId,
  runId,
  forRunId,
}: {
  db: Queryable;
  threadId: string;
  runId: string;
  forRunId: string;
}): Promise<string | null> {
  const first = await db.execute(sql`SELECT parent_checkpoint_id FROM ${checkpoints}
    WHERE thread_id = ${threadId} AND checkpoint_ns = '' AND metadata->>'run_id' = ${runId}
    ORDER BY checkpoint_id LIMIT 1`);
  const base = rowsOf<{ parent_checkpoint_id: string | null }>(first)[0]?.parent_checkpoint_id ?? null;
  if (!base) return null;
  await db.execute(sql`UPDATE ${checkpoints}
    SET metadata = metadata || jsonb_build_object('abandoned', jsonb_build_object('run', ${runId}::text, 'for', ${forRunId}::text))
    WHERE thread_id = ${threadId} AND metadata->>'run_id' = ${runId}`);
  return base;
}
