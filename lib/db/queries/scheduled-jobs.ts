import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { type ScheduledJob, scheduledJobs } from "../schema";
import type { Queryable } from "../tx";

/*
 * Leases of the jobs the server runs by itself. A lease is a row, not a session lock: it holds across the job's many
 * transactions, survives a transaction pooler, and lapses on its own when its holder dies.
 */

/**
 * Take the job's lease when it is free (no holder, or the holder's lease lapsed) and the job is due (never started,
 * or started at least `everyMs` ago). One statement, so of two instances asking at once exactly one gets it. Returns
 * the job's row when this caller now holds it, else null.
 */
export async function takeJobLease({
  db,
  name,
  holder,
  everyMs,
  leaseMs,
}: {
  db: Queryable;
  name: string;
  holder: string;
  everyMs: number;
  leaseMs: number;
}): Promise<ScheduledJob | null> {
  await db.insert(scheduledJobs).values({ name }).onConflictDoNothing();
  const [row] = await db
    .update(scheduledJobs)
    .set({
      leaseHolder: holder,
      leaseUntil: sql`now() + make_interval(secs => ${leaseMs / 1000})`,
      lastStartedAt: sql`now()`,
    })
    .where(
      and(
        eq(scheduledJobs.name, name),
        sql`(${scheduledJobs.leaseHolder} IS NULL OR ${scheduledJobs.leaseUntil} < now())`,
        sql`(${scheduledJobs.lastStartedAt} IS NULL OR ${scheduledJobs.lastStartedAt} <= now() - make_interval(secs => ${everyMs / 1000}))`,
      ),
    )
    .returning();
  return row ?? null;
}

/** Extend a held lease (the job is still working); false when this holder lost it. */
export async function renewJobLease({
  db,
  name,
  holder,
  leaseMs,
}: {
  db: Queryable;
  name: string;
  holder: string;
  leaseMs: number;
}): Promise<boolean> {
  const rows = await db
    .update(scheduledJobs)
    .set({ leaseUntil: sql`now() + make_interval(secs => ${leaseMs / 1000})` })
    .where(and(eq(scheduledJobs.name, name), eq(scheduledJobs.leaseHolder, holder)))
    .returning({ name: scheduledJobs.name });
  return rows.length > 0;
}

/** Record how the run ended and let go of the lease (only if this holder still has it). */
export async function finishJob({
  db,
  name,
  holder,
  ok,
  report,
  error,
}: {
  db: Queryable;
  name: string;
  holder: string;
  ok: boolean;
  report: Record<string, unknown> | null;
  error: string | null;
}): Promise<void> {
  await db
    .update(scheduledJobs)
    .set({
      leaseHolder: null,
      leaseUntil: null,
      lastFinishedAt: sql`now()`,
      lastHolder: holder,
      lastOk: ok,
      lastReport: report,
      lastError: error,
      runs: sql`${scheduledJobs.runs} + 1`,
    })
    .where(and(eq(scheduledJobs.name, name), eq(scheduledJobs.leaseHolder, holder)));
}

export async function getScheduledJob({
  db,
  name,
}: {
  db: Queryable;
  name: string;
}): Promise<ScheduledJob | null> {
  const [row] = await db.select().from(scheduledJobs).where(eq(scheduledJobs.name, name));
  return row ?? null;
}
