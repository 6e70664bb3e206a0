import "server-only";
import { randomUUID } from "node:crypto";
import { eq, getTableColumns, sql } from "drizzle-orm";
import { activeRunTrace } from "@/lib/observability/tracing";
import { type Effect, effects, type OutboxEmail, outbox } from "../schema";
import type { Queryable } from "../tx";
import { getEffectByKey } from "./effects";

/**
 * The key of an email: the decision that approved this draft revision (the confirm_email interrupt, or for an agent
 * that sends without asking, the step that decided). A re-run finds its own email; a second, edited reply on a
 * reopened ticket is approved by another decision, so it is an email of its own.
 */
export function emailIdempotencyKey(decisionRef: string): string {
  return `email:${decisionRef}`;
}

/**
 * Queue an email and its delivery intent, exactly once per approving decision: in one statement, the outbox row and
 * its `email` effect (which names the email queued under the key: this one, or the one an earlier attempt of the same
 * step queued). The email and effect already queued under the key are returned as they are. Nothing is sent here: the
 * dispatcher delivers it over SMTP afterwards.
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
  const emailId = randomUUID();
  const queued = db
    .$with("email")
    .as(
      db
        .insert(outbox)
        .values({ id: emailId, idempotencyKey, threadId, toAddress: to, subject, body })
        .onConflictDoNothing({ target: outbox.idempotencyKey })
        .returning(),
    );
  // The email under the key: the one this statement inserts, or the one queued before it.
  const underKey = sql`(SELECT id, to_address, subject, body FROM email
    UNION ALL SELECT id, to_address, subject, body FROM ${outbox} WHERE idempotency_key = ${idempotencyKey})`;
  const [effect] = await db
    .with(queued)
    .insert(effects)
    .values({
      id: randomUUID(),
      idempotencyKey,
      threadId,
      kind: "email",
      recordId: sql`(SELECT id FROM ${underKey} e LIMIT 1)`,
      payload: sql`(SELECT jsonb_build_object('emailId', id, 'to', to_address, 'subject', subject, 'body', body)
        FROM ${underKey} e LIMIT 1)`,
      ...activeRunTrace(),
    })
    .onConflictDoNothing({ target: effects.idempotencyKey })
    .returning({ ...getTableColumns(effects), emailInserted: sql<boolean>`EXISTS (SELECT 1 FROM email)` });
  if (effect?.emailInserted) {
    const { emailInserted: _, ...row } = effect;
    // Every column of the row just inserted is known (its created_at is the statement's now(), as the effect's).
    return {
      email: {
        id: emailId,
        idempotencyKey,
        threadId,
        toAddress: to,
        subject,
        body,
        createdAt: row.createdAt,
      },
      effect: row,
    };
  }
  // Queued before (an earlier attempt of the same step): what is recorded under the key.
  const [email] = await db.select().from(outbox).where(eq(outbox.idempotencyKey, idempotencyKey));
  if (!email) throw new Error(`queueEmail: no email under ${idempotencyKey} after a conflict`);
  if (effect) {
    const { emailInserted: _, ...row } = effect;
    return { email, effect: row };
  }
  const existing = await getEffectByKey({ db, idempotencyKey });
  if (!existing) throw new Error(`queueEmail: no effect under ${idempotencyKey} after a conflict`);
  return { email, effect: existing };
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
