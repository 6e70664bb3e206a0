import "server-only";
import { and, eq, inArray, sql } from "drizzle-orm";
import { type Run, runs } from "../schema";
import type { Queryable } from "../tx";

export const ACTIVE_RUN_STATUSES = ["queued", "running"] as const;

export async function getRun({ db, runId }: { db: Queryable; runId: string }): Promise<Run | undefined> {
  const [row] = await db.select().from(runs).where(eq(runs.id, runId));
  return row;
}

export async function getActiveRun({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<Run | undefined> {
  const [row] = await db
    .select()
    .from(runs)
    .where(and(eq(runs.threadId, threadId), inArray(runs.status, [...ACTIVE_RUN_STATUSES])));
  return row;
}

/** Insert a run that is already claimed by `owner`. The partial unique index refuses a second active run. */
export async function insertRun({
  db,
  run,
}: {
  db: Queryable;
  run: Pick<Run, "id" | "threadId" | "kind" | "input" | "fromCheckpointId" | "owner"> & { leaseMs: number };
}): Promise<Run> {
  const { leaseMs, ...values } = run;
  const [row] = await db
    .insert(runs)
    .values({
      ...values,
      status: "running",
      attempts: 1,
      startedAt: sql`now()`,
      leaseExpiresAt: sql`now() + make_interval(secs => ${leaseMs / 1000})`,
    })
    .returning();
  if (!row) throw new Error("insertRun: insert returned no row");
  return row;
}

/** Close a run with its final status. Only the current owner may close it (a stale owner's write is ignored). */
export async function finishRun({
  db,
  runId,
  owner,
  status,
  errorCode,
  errorMessage,
}: {
  db: Queryable;
  runId: string;
  owner: string;
  status: "interrupted" | "succeeded" | "failed" | "cancelled";
  errorCode?: string;
  errorMessage?: string;
}): Promise<boolean> {
  const updated = await db
    .update(runs)
    .set({ status, errorCode, errorMessage, finishedAt: sql`now()`, leaseExpiresAt: null })
    .where(and(eq(runs.id, runId), eq(runs.owner, owner), inArray(runs.status, [...ACTIVE_RUN_STATUSES])))
    .returning({ id: runs.id });
  return updated.length === 1;
}
