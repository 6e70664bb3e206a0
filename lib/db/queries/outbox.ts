import "server-only";
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { type OutboxEmail, outbox } from "../schema";
import type { Queryable } from "../tx";

/** The business key of a thread's customer reply: one reply email per thread. */
export function replyIdempotencyKey(threadId: string): string {
  return `reply:${threadId}`;
}

/**
 * Queue the customer reply of a thread in the outbox, exactly once. When the thread's reply is already queued (a
 * re-run or a fork of the sending step), the queued email is returned with `duplicate: true` and nothing is added.
 */
export async function queueEmail({
  db,
  threadId,
  to,
  subject,
  body,
}: {
  db: Queryable;
  threadId: string;
  to: string;
  subject: string;
  body: string;
}): Promise<{ email: OutboxEmail; duplicate: boolean }> {
  const idempotencyKey = replyIdempotencyKey(threadId);
  return db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(outbox)
      .values({ id: randomUUID(), idempotencyKey, threadId, toAddress: to, subject, body })
      .onConflictDoNothing({ target: outbox.idempotencyKey })
      .returning();
    if (inserted) return { email: inserted, duplicate: false };
    const [existing] = await tx.select().from(outbox).where(eq(outbox.idempotencyKey, idempotencyKey));
    if (!existing) throw new Error(`queueEmail: no email under ${idempotencyKey} after a conflict`);
    return { email: existing, duplicate: true };
  });
}

/** The emails queued for a thread, oldest first. */
export async function listEmailsForThread({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<OutboxEmail[]> {
  return db.select().from(outbox).where(eq(outbox.threadId, threadId)).orderBy(outbox.createdAt);
}
