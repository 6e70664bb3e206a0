import "server-only";
import { asc, gt, lt, sql } from "drizzle-orm";
import { inboxChanges } from "../schema";
import type { Queryable } from "../tx";

/** The NOTIFY channel the change-feed triggers announce new rows on (payload: the row id). */
export const INBOX_CHANNEL = "inbox_changes";

/** One change to the inbox: a decision raised, decided, claimed, released or escalated. */
export interface InboxChangeView {
  id: number;
  interruptId: string;
  threadId: string;
  kind: string;
}

/** Changes after `afterId`, oldest first (at most `limit`). */
export async function listInboxChanges({
  db,
  afterId,
  limit = 500,
}: {
  db: Queryable;
  afterId: number;
  limit?: number;
}): Promise<InboxChangeView[]> {
  return db
    .select({
      id: inboxChanges.id,
      interruptId: inboxChanges.interruptId,
      threadId: inboxChanges.threadId,
      kind: inboxChanges.kind,
    })
    .from(inboxChanges)
    .where(gt(inboxChanges.id, afterId))
    .orderBy(asc(inboxChanges.id))
    .limit(limit);
}

/** The newest change id (0 when there is none): where a new live inbox starts following. */
export async function latestInboxChangeId({ db }: { db: Queryable }): Promise<number> {
  const [row] = await db
    .select({ id: sql<number>`coalesce(max(${inboxChanges.id}), 0)::int` })
    .from(inboxChanges);
  return row?.id ?? 0;
}

/** The oldest change id still kept (a cursor before it cannot be replayed: the client reloads instead). */
export async function oldestInboxChangeId({ db }: { db: Queryable }): Promise<number> {
  const [row] = await db
    .select({ id: sql<number>`coalesce(min(${inboxChanges.id}), 0)::int` })
    .from(inboxChanges);
  return row?.id ?? 0;
}

/** Forget changes older than `keepSeconds` (the feed is for live inboxes, not an audit trail). */
export async function pruneInboxChanges({ db, keepSeconds }: { db: Queryable; keepSeconds: number }) {
  const rows = await db
    .delete(inboxChanges)
    .where(lt(inboxChanges.at, sql`now() - make_interval(secs => ${keepSeconds})`))
    .returning({ id: inboxChanges.id });
  return rows.length;
}
