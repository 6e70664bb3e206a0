import "server-only";
import { randomUUID } from "node:crypto";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import {
  type Effect,
  effects,
  type ProviderFinding,
  providerEvents,
  providerFindings,
  type ReconciliationRun,
  reconciliationRuns,
} from "../schema";
import type { Queryable } from "../tx";
import { openedEffect, sealEffectError } from "./effects";

/*
 * What the payment provider says happened, as the ledger records it: the webhook events received (each applied once),
 * the differences found between the provider and the ledger (each an operator task, found once), and the runs of the
 * daily reconciliation.
 */

/** Record a webhook event as received: false when it was received before (applied then, not again). */
export async function recordProviderEvent({
  db,
  id,
  provider,
  type,
  objectId,
}: {
  db: Queryable;
  id: string;
  provider: string;
  type: string;
  objectId: string | null;
}): Promise<boolean> {
  const rows = await db
    .insert(providerEvents)
    .values({ id, provider, type, objectId, outcome: "received" })
    .onConflictDoNothing({ target: providerEvents.id })
    .returning({ id: providerEvents.id });
  return rows.length > 0;
}

export async function setProviderEventOutcome({
  db,
  id,
  outcome,
}: {
  db: Queryable;
  id: string;
  outcome: string;
}): Promise<void> {
  await db.update(providerEvents).set({ outcome }).where(eq(providerEvents.id, id));
}

/** The effect the provider knows by `ref` (with Stripe's test-mode prefix or without), opened; null when none. */
export async function effectByProviderRef({
  db,
  refs,
}: {
  db: Queryable;
  refs: string[];
}): Promise<Effect | null> {
  const [row] = await db.select().from(effects).where(inArray(effects.providerRef, refs)).limit(1);
  return row ? openedEffect(db, row) : null;
}

/** The effect recorded under an idempotency key (a Stripe object's metadata carries it), opened; null when none. */
export async function effectByKey({ db, key }: { db: Queryable; key: string }): Promise<Effect | null> {
  const [row] = await db.select().from(effects).where(eq(effects.idempotencyKey, key));
  return row ? openedEffect(db, row) : null;
}

/**
 * Move an effect as its provider said, only forward and only from the statuses given (one statement: of two events
 * applied at once, one moves it). `failed` opens the effect's operator task with `error` (sealed as every effect error
 * is). True when it moved.
 */
export async function moveEffectAsProviderSaid({
  db,
  effect,
  from,
  to,
  error,
}: {
  db: Queryable;
  effect: Pick<Effect, "id" | "threadId">;
  from: readonly Effect["status"][];
  to: "delivered" | "failed";
  error?: string;
}): Promise<boolean> {
  const rows = await db
    .update(effects)
    .set(
      to === "delivered"
        ? { status: "delivered", deliveredAt: sql`now()`, lastError: null, updatedAt: sql`now()` }
        : {
            status: "failed",
            lastError: await sealEffectError(db, effect.threadId, error ?? "provider:refund_failed"),
            updatedAt: sql`now()`,
          },
    )
    .where(and(eq(effects.id, effect.id), inArray(effects.status, [...from])))
    .returning({ id: effects.id });
  return rows.length > 0;
}

/** The payment effects whose provider answer is still `pending` (the reconciliation asks about each). */
export async function listPendingPaymentEffects({
  db,
  limit = 500,
}: {
  db: Queryable;
  limit?: number;
}): Promise<Effect[]> {
  const rows = await db
    .select()
    .from(effects)
    .where(and(eq(effects.kind, "payment"), eq(effects.status, "pending")))
    .limit(limit);
  return Promise.all(rows.map((row) => openedEffect(db, row)));
}

/**
 * Payment effects the provider took (a provider id is recorded: pending, delivered, or failed and handled since)
 * created from `since` on: the ledger's side of a reconciliation.
 */
export async function listPaidEffectsSince({
  db,
  since,
  until,
}: {
  db: Queryable;
  since: Date;
  until: Date;
}): Promise<Effect[]> {
  const rows = await db
    .select()
    .from(effects)
    .where(
      and(
        eq(effects.kind, "payment"),
        sql`${effects.providerRef} IS NOT NULL`,
        sql`${effects.providerRef} NOT LIKE 'handed-over:%'`,
        sql`${effects.createdAt} >= ${since.toISOString()}`,
        sql`${effects.createdAt} < ${until.toISOString()}`,
      ),
    );
  return Promise.all(rows.map((row) => openedEffect(db, row)));
}

/** A difference to record as an operator task. */
export interface NewFinding {
  /** Unique per difference: a second run (or a webhook and a run) records it once. */
  findingKey: string;
  provider: string;
  kind: string;
  providerRef: string | null;
  effectId?: string | null;
  threadId?: string | null;
  orderId?: string | null;
  ledger: Record<string, unknown> | null;
  providerSide: Record<string, unknown> | null;
  runId?: string | null;
}

/** Record the findings not recorded before; returns the new ones. */
export async function insertFindings({
  db,
  findings,
}: {
  db: Queryable;
  findings: NewFinding[];
}): Promise<ProviderFinding[]> {
  if (findings.length === 0) return [];
  return db
    .insert(providerFindings)
    .values(findings.map((f) => ({ id: randomUUID(), ...f })))
    .onConflictDoNothing({ target: providerFindings.findingKey })
    .returning();
}

export async function listFindings({
  db,
  status,
  limit = 200,
}: {
  db: Queryable;
  status?: "open" | "handled";
  limit?: number;
}): Promise<ProviderFinding[]> {
  return db
    .select()
    .from(providerFindings)
    .where(status ? eq(providerFindings.status, status) : undefined)
    .orderBy(desc(providerFindings.createdAt))
    .limit(limit);
}

export async function getFinding({ db, id }: { db: Queryable; id: string }): Promise<ProviderFinding | null> {
  const [row] = await db.select().from(providerFindings).where(eq(providerFindings.id, id));
  return row ?? null;
}

export async function countOpenFindings({ db }: { db: Queryable }): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(providerFindings)
    .where(eq(providerFindings.status, "open"));
  return row?.n ?? 0;
}

/** Close an open finding (an operator dealt with it); null when it is not open (unknown, or closed before). */
export async function resolveFinding({
  db,
  id,
  by,
}: {
  db: Queryable;
  id: string;
  by: string;
}): Promise<ProviderFinding | null> {
  const [row] = await db
    .update(providerFindings)
    .set({ status: "handled", resolvedBy: by, resolvedAt: sql`now()` })
    .where(and(eq(providerFindings.id, id), eq(providerFindings.status, "open")))
    .returning();
  return row ?? null;
}

export async function startReconciliationRun({
  db,
  provider,
  instance,
  since,
  until,
}: {
  db: Queryable;
  provider: string;
  instance: string;
  since: Date;
  until: Date;
}): Promise<ReconciliationRun> {
  const [row] = await db
    .insert(reconciliationRuns)
    .values({ id: randomUUID(), provider, instance, since, until })
    .returning();
  if (!row) throw new Error("startReconciliationRun: no row");
  return row;
}

export async function finishReconciliationRun({
  db,
  id,
  outcome,
  providerCount,
  ledgerCount,
  found,
  error,
}: {
  db: Queryable;
  id: string;
  outcome: "ok" | "failed";
  providerCount: number;
  ledgerCount: number;
  found: number;
  error: string | null;
}): Promise<void> {
  await db
    .update(reconciliationRuns)
    .set({ outcome, providerCount, ledgerCount, found, error, finishedAt: sql`now()` })
    .where(eq(reconciliationRuns.id, id));
}

/** Where the next run starts: where the last successful one ended; null before the first. */
export async function lastReconciledUntil({
  db,
  provider,
}: {
  db: Queryable;
  provider: string;
}): Promise<Date | null> {
  const [row] = await db
    .select({ until: reconciliationRuns.until })
    .from(reconciliationRuns)
    .where(and(eq(reconciliationRuns.provider, provider), eq(reconciliationRuns.outcome, "ok")))
    .orderBy(desc(reconciliationRuns.until))
    .limit(1);
  return row?.until ?? null;
}

export async function listReconciliationRuns({
  db,
  limit = 20,
}: {
  db: Queryable;
  limit?: number;
}): Promise<ReconciliationRun[]> {
  return db.select().from(reconciliationRuns).orderBy(desc(reconciliationRuns.startedAt)).limit(limit);
}
