import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { threadFollowers } from "../schema";
import type { Queryable } from "../tx";

/*
 * Followers of a thread on other instances (schema `thread_followers`): an event append notifies only when one exists.
 */

/** Follow `threadId` from `instanceId` for `ttlMs` (again: the row's expiry moves); a thread's expired rows go too. */
export async function followThread({
  db,
  threadId,
  instanceId,
  ttlMs,
}: {
  db: Queryable;
  threadId: string;
  instanceId: string;
  ttlMs: number;
}): Promise<void> {
  await db.execute(sql`WITH gone AS (
    DELETE FROM ${threadFollowers} WHERE thread_id = ${threadId} AND expires_at < now()
  )
  INSERT INTO ${threadFollowers} (thread_id, instance_id, expires_at)
  VALUES (${threadId}, ${instanceId}, now() + make_interval(secs => ${ttlMs / 1000}))
  ON CONFLICT (thread_id, instance_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`);
}

/** Stop following (the stream ended). */
export async function unfollowThread({
  db,
  threadId,
  instanceId,
}: {
  db: Queryable;
  threadId: string;
  instanceId: string;
}): Promise<void> {
  await db
    .delete(threadFollowers)
    .where(and(eq(threadFollowers.threadId, threadId), eq(threadFollowers.instanceId, instanceId)));
}
