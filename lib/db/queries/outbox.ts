import "server-only";
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { type Effect, type OutboxEmail, outbox } from "../schema";
import type { Queryable } from "../tx";
import { insertEffect } from "./effects";

/**
 * The key of an email: the decision that approved this draft revision (the confirm_email interrupt, or for an agent
 * that sends without asking, the step that decided). A re-run finds its own email; a second, edited reply on a
 * reopened ticket is approved by another decision, so it is an email of its own.
 */
export function emailIdempotencyKey(decisionRef: string): string {
  return `email:${decisionRef}`;
}

/**
 * Queue an email and its delivery intent, exactly once per approving decision: in one transaction, the outbox row
 * and its `email` effect. The email queued under the key already (an earlier attempt of the same step) is returned
 * as it is. Nothing is sent here: the dispatcher delivers it over SMTP afterwards.
 */
export async function queueEmail({
  db,
  decisionRef,
  threadId,
  to,
  subject,
  body,
}: {
  db: Queryable;
  decisionRef: string;
  threadId: string;
  to: string;
  subject: string;
  body: string;
}): Promise<{ email: OutboxEmail; effect: Effect }> {
  const idempotencyKey = emailIdempotencyKey(decisionRef);
  return db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(outbox)
      .values({ id: randomUUID(), idempotencyKey, threadId, toAddress: to, subject, body })
      .onConflictDoNothing({ target: outbox.idempotencyKey })
      .returning();
    const email =
      inserted ?? (await tx.select().from(outbox).where(eq(outbox.idempotencyKey, idempotencyKey)))[0];
    if (!email) throw new Error(`queueEmail: no email under ${idempotencyKey} after a conflict`);
    const effect = await insertEffect({
      db: tx,
      intent: {
        idempotencyKey,
        threadId,
        kind: "email",
        recordId: email.id,
        payload: { emailId: email.id, to: email.toAddress, subject: email.subject, body: email.body },
      },
    });
    return { email, effect };
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
