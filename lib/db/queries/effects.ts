import "server-only";
import { randomUUID } from "node:crypto";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { EffectStatus, EffectTaskAction } from "@/lib/contract/wire";
import { activeRunTrace } from "@/lib/platform/observability/tracing";
import { rowsOf } from "../rows";
import { type Effect, effects } from "../schema";
import type { Queryable } from "../tx";
import { ERASED_TEXT, openThreadJson, openThreadText, rowSealer, sealThreadJson } from "../vault";
import { type LocalScope, listLocalOwners } from "./instances";

/*
 * An effect's payload says what is sent (an email's address and words, the account a change goes to): it is stored
 * sealed under its thread's subject key (lib/db/vault.ts). What writes an effect seals its payload
 * ({@link sealEffectPayload}); every function here that returns an effect returns it opened.
 */

/** An effect's payload as its column stores it. */
export async function sealEffectPayload(db: Queryable, threadId: string, payload: Record<string, unknown>) {
  return (await sealThreadJson(db, threadId, payload)) as Record<string, unknown>;
}

/** `effect` with its payload and last error opened (an erased subject's read `{ erased: true }` and `[erased]`). */
export async function openedEffect<
  T extends Pick<Effect, "threadId" | "payload"> & { lastError?: string | null },
>(db: Queryable, effect: T): Promise<T> {
  return {
    ...effect,
    payload: await openThreadJson(db, effect.threadId, effect.payload),
    ...(effect.lastError ? { lastError: await openThreadText(db, effect.threadId, effect.lastError) } : {}),
  };
}

/**
 * An effect's error as its column stores it: sealed under the thread's key (a provider's or a mail server's answer can
 * name the customer: `550 <ann@…>: mailbox unavailable`); for an erased customer's thread, `[erased]`.
 */
export async function sealEffectError(db: Queryable, threadId: string, error: string): Promise<string> {
  const sealed = (await rowSealer(db, threadId, "mark", "sealed-records")).text(error);
  if (sealed !== ERASED_TEXT) return sealed;
  // Erased: the error's code stays (what an operator acts on, `conflict:subject_erased` among them), its words not.
  const code = /^[a-z_]+:[a-z0-9_]+/.exec(error)?.[0];
  return code ? `${code}: ${ERASED_TEXT}` : ERASED_TEXT;
}

/** An effect to record: what delivers it (`kind`), the business row it delivers, and what the connector sends. */
export interface EffectIntent {
  idempotencyKey: string;
  threadId: string;
  kind: string;
  recordId: string;
  payload: Record<string, unknown>;
  /** The decision receipt that authorizes it (kinds that move money or change an account). */
  receiptId?: string | null;
  /** Recorded held: not delivered but `failed` at once with this error, an operator task (no receipt authorized it). */
  held?: string;
}

/**
 * Record an effect intent (call it inside the transaction that writes its business row). Idempotent by key: the
 * effect already recorded under the key is returned instead of a second one. It carries the trace of the run
 * recording it (the active run span's ids), which its deliveries join.
 */
export async function insertEffect({ db, intent }: { db: Queryable; intent: EffectIntent }): Promise<Effect> {
  const { held, ...row } = intent;
  const [inserted] = await db
    .insert(effects)
    .values({
      id: randomUUID(),
      ...activeRunTrace(),
      ...row,
      payload: await sealEffectPayload(db, row.threadId, row.payload),
      ...(held
        ? { status: "failed" as const, lastError: await sealEffectError(db, row.threadId, held) }
        : {}),
    })
    .onConflictDoNothing({ target: effects.idempotencyKey })
    .returning();
  if (inserted) return { ...inserted, payload: row.payload, lastError: held ?? inserted.lastError };
  const existing = await getEffectByKey({ db, idempotencyKey: intent.idempotencyKey });
  if (!existing) throw new Error(`insertEffect: no effect under ${intent.idempotencyKey} after a conflict`);
  return existing;
}

export async function getEffectByKey({
  db,
  idempotencyKey,
}: {
  db: Queryable;
  idempotencyKey: string;
}): Promise<Effect | undefined> {
  const [row] = await db.select().from(effects).where(eq(effects.idempotencyKey, idempotencyKey));
  return row && openedEffect(db, row);
}

export async function getEffect({ db, effectId }: { db: Queryable; effectId: string }) {
  const [row] = await db.select().from(effects).where(eq(effects.id, effectId));
  return row && openedEffect(db, row);
}

/** How many effects a thread recorded at or after `since` (a run's start): a rollback never goes behind one. */
export async function countEffectsSince({
  db,
  threadId,
  since,
}: {
  db: Queryable;
  threadId: string;
  since: Date;
}): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await db.execute(
      sql`SELECT count(*)::int AS n FROM ${effects} WHERE ${effects.threadId} = ${threadId} AND ${effects.createdAt} >= ${since.toISOString()}::timestamptz`,
    ),
  );
  return row?.n ?? 0;
}

/** A thread's effects, oldest first. */
export async function listThreadEffects({ db, threadId }: { db: Queryable; threadId: string }) {
  const rows = await db
    .select()
    .from(effects)
    .where(eq(effects.threadId, threadId))
    .orderBy(asc(effects.createdAt), asc(effects.id));
  return Promise.all(rows.map((row) => openedEffect(db, row)));
}

/**
 * Claim up to `limit` effects for delivery: queued ones that are due, and `sending` ones whose claim expired (their
 * dispatcher died mid-send) or whose owner is known dead (`deadOwners`). `FOR UPDATE SKIP LOCKED`: dispatchers of
 * several instances never claim the same row. Each claim counts as an attempt.
 */
export async function claimDueEffects({
  db,
  owner,
  leaseMs,
  limit,
  deadOwners = [],
}: {
  db: Queryable;
  owner: string;
  leaseMs: number;
  limit: number;
  deadOwners?: string[];
}): Promise<Effect[]> {
  const dead =
    deadOwners.length > 0 ? sql`or (status = 'sending' and ${inArray(effects.owner, deadOwners)})` : sql``;
  const result = await db.execute<Record<string, unknown>>(sql`
    update effects set status = 'sending', attempts = attempts + 1, owner = ${owner},
      lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}), updated_at = now()
    where id in (
      select id from effects
      where (status = 'queued' and next_attempt_at <= now())
         or (status = 'sending' and lease_expires_at < now())
         ${dead}
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    returning id`);
  const ids = rowsOf(result).map((r) => String(r.id));
  if (ids.length === 0) return [];
  const rows = await db
    .select()
    .from(effects)
    .where(and(inArray(effects.id, ids), eq(effects.owner, owner)));
  return Promise.all(rows.map((row) => openedEffect(db, row)));
}

/**
 * Other instances of this machine's boot and pid namespace holding effects in `sending`, with their pids: the owners
 * whose death this process can check (see `isGoneHere`); their claims are taken over without waiting for the lease.
 */
export function listLocalEffectOwners(scope: LocalScope): Promise<{ id: string; pid: number }[]> {
  return listLocalOwners({
    ...scope,
    table: effects,
    owner: effects.owner,
    holding: eq(effects.status, "sending"),
  });
}

/**
 * The provider confirmed the effect: delivered — or `pending` when it took it without settling it yet — only while
 * this dispatcher still holds it.
 */
export async function markEffectDelivered({
  db,
  effectId,
  owner,
  providerRef,
  pending = false,
}: {
  db: Queryable;
  effectId: string;
  owner: string;
  providerRef: string | null;
  pending?: boolean;
}): Promise<boolean> {
  const rows = await db
    .update(effects)
    .set({
      status: pending ? "pending" : "delivered",
      providerRef,
      lastError: null,
      deliveredAt: pending ? null : sql`now()`,
      leaseExpiresAt: null,
      updatedAt: sql`now()`,
    })
    .where(and(eq(effects.id, effectId), eq(effects.owner, owner), eq(effects.status, "sending")))
    .returning({ id: effects.id });
  return rows.length > 0;
}

/**
 * The connector is handing the effect over for good (an email's DATA terminator is next): recorded before it does, so
 * a crash from here on is known to have happened after the hand-over. False when this dispatcher lost the effect.
 */
export async function markEffectHandedOver({
  db,
  effectId,
  owner,
  ref,
}: {
  db: Queryable;
  effectId: string;
  owner: string;
  ref: string;
}): Promise<boolean> {
  const rows = await db
    .update(effects)
    .set({ providerRef: `${HANDED_OVER}${ref}`, updatedAt: sql`now()` })
    .where(and(eq(effects.id, effectId), eq(effects.owner, owner), eq(effects.status, "sending")))
    .returning({ id: effects.id });
  return rows.length > 0;
}

/** Effect statuses whose operator task is open: an operator must act. */
export const OPEN_TASK_STATUSES = ["failed", "unconfirmed"] as const satisfies readonly EffectStatus[];

/** Whether an effect in `status` has an open operator task. */
export function isOpenTaskStatus(status: string): boolean {
  return (OPEN_TASK_STATUSES as readonly string[]).includes(status);
}

/** Effect statuses of an effect the outside world may not have received yet: waiting, in flight, or an open task. */
export const UNDELIVERED_STATUSES = [
  "queued",
  "sending",
  "pending",
  ...OPEN_TASK_STATUSES,
] as const satisfies readonly EffectStatus[];

/** `statuses` as an SQL list of literals, for raw SQL (constants only: never pass anything a caller supplied). */
export function statusLiterals(statuses: readonly EffectStatus[]) {
  return sql.raw(statuses.map((s) => `'${s.replaceAll("'", "''")}'`).join(", "));
}

/** The prefix of `provider_ref` while an effect is being handed over (see `markEffectHandedOver`). */
export const HANDED_OVER = "handed-over:";

/**
 * An attempt failed: queue the effect again after `retryInMs`, or — out of attempts, or a permanent refusal
 * (`retryInMs` null) — mark it failed, which opens its operator task. `unconfirmed` (with what to look for at the
 * provider): its outcome is unknown, which opens the operator task too, under that name.
 */
export async function markEffectAttemptFailed({
  db,
  effectId,
  threadId,
  owner,
  error,
  retryInMs,
  unconfirmed,
}: {
  db: Queryable;
  effectId: string;
  /** The effect's thread: its error is sealed under the thread's key. */
  threadId: string;
  owner: string;
  error: string;
  retryInMs: number | null;
  unconfirmed?: { providerRef: string };
}): Promise<"queued" | "failed" | "unconfirmed" | "lost"> {
  const status = unconfirmed ? "unconfirmed" : retryInMs === null ? "failed" : "queued";
  const rows = await db
    .update(effects)
    .set({
      status,
      lastError: await sealEffectError(db, threadId, error.slice(0, 2000)),
      // A hand-over the provider then refused did not happen; an unconfirmed one keeps what to look for.
      providerRef: unconfirmed?.providerRef ?? null,
      nextAttemptAt:
        retryInMs === null || unconfirmed
          ? sql`now()`
          : sql`now() + make_interval(secs => ${retryInMs / 1000})`,
      leaseExpiresAt: null,
      updatedAt: sql`now()`,
    })
    .where(and(eq(effects.id, effectId), eq(effects.owner, owner), eq(effects.status, "sending")))
    .returning({ id: effects.id });
  return rows.length > 0 ? status : "lost";
}

/**
 * An operator's answer to a failed or unconfirmed effect's task: `retry` queues it again with a fresh count of attempts
 * (and no hand-over mark: it is sent again); the others close it as handled. Compare-and-set on the open status: two
 * operators cannot both act on one task.
 */
export async function resolveEffectTask({
  db,
  effectId,
  action,
  resolvedBy,
  onlyIf = OPEN_TASK_STATUSES,
}: {
  db: Queryable;
  effectId: string;
  action: EffectTaskAction;
  resolvedBy: string;
  /** The open statuses the effect may be in for this action (default: any). */
  onlyIf?: readonly (typeof OPEN_TASK_STATUSES)[number][];
}): Promise<Effect | undefined> {
  const [row] = await db
    .update(effects)
    .set(
      action === "retry"
        ? {
            status: "queued",
            attempts: 0,
            providerRef: null,
            nextAttemptAt: sql`now()`,
            resolution: action,
            resolvedBy,
            resolvedAt: sql`now()`,
            updatedAt: sql`now()`,
          }
        : {
            status: "handled",
            resolution: action,
            resolvedBy,
            resolvedAt: sql`now()`,
            updatedAt: sql`now()`,
          },
    )
    .where(and(eq(effects.id, effectId), inArray(effects.status, [...onlyIf])))
    .returning();
  return row;
}
