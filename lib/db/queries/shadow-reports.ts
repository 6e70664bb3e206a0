import "server-only";
import { randomUUID } from "node:crypto";
import { and, asc, desc, eq, exists, inArray } from "drizzle-orm";
import { type DeployShadowReport, decisions, deployShadowReports, type Thread, threads } from "../schema";
import type { Queryable } from "../tx";
import { openThreads } from "./threads";

/**
 * Threads waiting for a person (paused, with a pending decision), oldest first: what the deploy shadow replays.
 * `threadIds` narrows them to those; `limit` takes a sample.
 */
export async function listWaitingThreads({
  db,
  threadIds,
  limit,
}: {
  db: Queryable;
  threadIds?: readonly string[];
  limit?: number;
}): Promise<Thread[]> {
  const query = db
    .select()
    .from(threads)
    .where(
      and(
        eq(threads.status, "interrupted"),
        threadIds ? inArray(threads.id, [...threadIds]) : undefined,
        exists(
          db
            .select({ one: decisions.interruptId })
            .from(decisions)
            .where(and(eq(decisions.threadId, threads.id), eq(decisions.status, "pending"))),
        ),
      ),
    )
    .orderBy(asc(threads.createdAt), asc(threads.id));
  return openThreads(db, await (limit === undefined ? query : query.limit(limit)));
}

/** Keep a deploy shadow report. */
export async function insertShadowReport({
  db,
  report,
}: {
  db: Queryable;
  report: Omit<DeployShadowReport, "id" | "createdAt">;
}): Promise<DeployShadowReport> {
  const [row] = await db
    .insert(deployShadowReports)
    .values({ id: randomUUID(), ...report })
    .returning();
  if (!row) throw new Error("insertShadowReport: no row returned");
  return row;
}

/** The last deploy shadow report, or null when none was made. */
export async function lastShadowReport({ db }: { db: Queryable }): Promise<DeployShadowReport | null> {
  const [row] = await db
    .select()
    .from(deployShadowReports)
    .orderBy(desc(deployShadowReports.createdAt))
    .limit(1);
  return row ?? null;
}
