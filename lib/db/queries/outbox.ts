import "server-only";
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { activeRunTrace } from "@/lib/platform/observability/tracing";
import { rowsOf, tableRow } from "../rows";
import { type Effect, effects, type OutboxEmail, outbox } from "../schema";
import type { Queryable } from "../tx";
import { openThreadText, sealThreadText } from "../vault";
import { insertEffect, sealEffectPayload } from "./effects";

/*
 * An email's address, subject and body are the customer's: stored sealed under its thread's subject key
 * (lib/db/vault.ts), in the outbox as in its effect's payload. What is returned here is opened.
 */

/** An email's address, subject and body as the outbox stores them. */
async function sealedEmail(
  db: Queryable,
  threadId: string,
  email: { to: string; subject: string; body: string },
): Promise<{ sealedTo: string; sealedSubject: string; sealedBody: string }> {
  return {
    sealedTo: await sealThreadText(db, threadId, email.to),
    sealedSubject: await sealThreadText(db, threadId, email.subject),
    sealedBody: await sealThreadText(db, threadId, email.body),
  };
}

/** An outbox row with its address, subject and body opened. */
async function opened(db: Queryable, email: OutboxEmail): Promise<OutboxEmail> {
  return {
    ...email,
    toAddress: await openThreadText(db, email.threadId, email.toAddress),
    subject: await openThreadText(db, email.threadId, email.subject),
    body: await openThreadText(db, email.threadId, email.body),
  };
}

/**
 * The key of an email: the decision that approved this draft revision (the confirm_email interrupt, or for an agent
 * that sends without asking, the step that decided). A re-run finds its own email; a second, edited reply on a
 * reopened ticket is approved by another decision, so it is an email of its own.
 */
export function emailIdempotencyKey(decisionRef: string): string {
  return `email:${decisionRef}`;
}

/**
 * Queue an email and its delivery intent, exactly once per approving decision: the outbox row and its `email` effect
 * together. The email queued under the key already (an earlier attempt of the same step) is returned as it is, with
 * its effect. Nothing is sent here: the dispatcher delivers it over SMTP afterwards.
 *
 * One statement when the key is new: the effect is inserted from the email the statement itself inserted (never from
 * a read of the outbox, whose snapshot may predate another attempt's commit it waited for). When the key was taken
 * (the email's insert did nothing, after waiting for the attempt that holds it), nothing is inserted and the
 * transaction below runs: its statements see what that attempt committed.
 */
export async function queueEmail(request: EmailRequest): Promise<{ email: OutboxEmail; effect: Effect }> {
  const { db, decisionRef, threadId, to, subject, body } = request;
  const idempotencyKey = emailIdempotencyKey(decisionRef);
  const emailId = randomUUID();
  const { traceId, traceSpanId } = activeRunTrace();
  const { sealedTo, sealedSubject, sealedBody } = await sealedEmail(db, threadId, { to, subject, body });
  const payload = await sealEffectPayload(db, threadId, { emailId, to, subject, body });
  const [row] = rowsOf<Record<string, unknown>>(
    await db.execute(sql`WITH email AS (
        INSERT INTO ${outbox} (id, idempotency_key, thread_id, to_address, subject, body)
        VALUES (${emailId}, ${idempotencyKey}, ${threadId}, ${sealedTo}, ${sealedSubject}, ${sealedBody})
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING id, created_at
      )
      INSERT INTO ${effects} (id, idempotency_key, thread_id, kind, record_id, payload, trace_id, trace_span_id)
      SELECT ${randomUUID()}, ${idempotencyKey}, ${threadId}, 'email', email.id, ${JSON.stringify(payload)}::jsonb,
        ${traceId}, ${traceSpanId}
      FROM email
      ON CONFLICT (idempotency_key) DO NOTHING
      RETURNING *, (SELECT created_at FROM email) AS email_created_at`),
  );
  if (!row) return queueEmailInTransaction(request);
  const effect = { ...tableRow(effects, row), payload: { emailId, to, subject, body } };
  return {
    email: {
      id: emailId,
      idempotencyKey,
      threadId,
      toAddress: to,
      subject,
      body,
      createdAt: outbox.createdAt.mapFromDriverValue(row.email_created_at as string) as Date,
    },
    effect,
  };
}

interface EmailRequest {
  db: Queryable;
  decisionRef: string;
  threadId: string;
  to: string;
  subject: string;
  body: string;
}

/** {@link queueEmail} in one transaction: the email under the key (this one, or the one queued before), its effect. */
async function queueEmailInTransaction({
  db,
  decisionRef,
  threadId,
  to,
  subject,
  body,
}: EmailRequest): Promise<{ email: OutboxEmail; effect: Effect }> {
  const idempotencyKey = emailIdempotencyKey(decisionRef);
  return db.transaction(async (tx) => {
    const { sealedTo, sealedSubject, sealedBody } = await sealedEmail(tx, threadId, { to, subject, body });
    const [inserted] = await tx
      .insert(outbox)
      .values({
        id: randomUUID(),
        idempotencyKey,
        threadId,
        toAddress: sealedTo,
        subject: sealedSubject,
        body: sealedBody,
      })
      .onConflictDoNothing({ target: outbox.idempotencyKey })
      .returning();
    const stored =
      inserted ?? (await tx.select().from(outbox).where(eq(outbox.idempotencyKey, idempotencyKey)))[0];
    if (!stored) throw new Error(`queueEmail: no email under ${idempotencyKey} after a conflict`);
    const email = await opened(tx, stored);
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
  const rows = await db.select().from(outbox).where(eq(outbox.threadId, threadId)).orderBy(outbox.createdAt);
  return Promise.all(rows.map((row) => opened(db, row)));
}
