import "server-only";
import { randomUUID } from "node:crypto";
import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import { NOTIFY_EVENTS, type NotifyEvent, type TargetView } from "@/lib/contract/views/settings";
import { authUsers, decisions, effects, notifications, notificationTargets } from "../schema";
import type { Queryable } from "../tx";
import { isErasedValue, isSealedJson, openThreadJson, openThreadText, rowSealer } from "../vault";
import { openedDecisions } from "./decisions";
import { OPEN_TASK_STATUSES } from "./effects";

/** The events and the target's shape are the browser's too (lib/contract/views/settings.ts). */
export { NOTIFY_EVENTS, type NotifyEvent, type TargetView };

const targetView = {
  id: notificationTargets.id,
  kind: sql<"webhook" | "email">`${notificationTargets.kind}`,
  target: notificationTargets.target,
  events: sql<NotifyEvent[]>`${notificationTargets.events}`,
  minAmountCents: notificationTargets.minAmountCents,
  enabled: notificationTargets.enabled,
  signed: sql<boolean>`${notificationTargets.secret} IS NOT NULL`,
};

export async function listTargets({ db }: { db: Queryable }): Promise<TargetView[]> {
  return db.select(targetView).from(notificationTargets).orderBy(asc(notificationTargets.createdAt));
}

export async function insertTarget({
  db,
  target,
}: {
  db: Queryable;
  target: Omit<TargetView, "id" | "signed" | "enabled"> & { secret: string | null };
}): Promise<TargetView> {
  const [row] = await db
    .insert(notificationTargets)
    .values({ id: randomUUID(), ...target })
    .returning(targetView);
  if (!row) throw new Error("insert returned nothing");
  return row;
}

export async function deleteTarget({ db, id }: { db: Queryable; id: string }): Promise<boolean> {
  const rows = await db
    .delete(notificationTargets)
    .where(eq(notificationTargets.id, id))
    .returning({ id: notificationTargets.id });
  return rows.length > 0;
}

/**
 * Queue `event` about `subjectId` for every enabled target that wants it (and, for `new_item`, whose minimum amount
 * it reaches). Keyed `<event>:<subject>:<target>`: recording the same event twice — two instances, a retry after a
 * crash — notifies each target once.
 */
export async function enqueueNotifications({
  db,
  event,
  subjectId,
  amountCents = null,
  payload,
}: {
  db: Queryable;
  event: NotifyEvent;
  subjectId: string;
  amountCents?: number | null;
  payload: Record<string, unknown>;
}): Promise<number> {
  const stored = await sealedPayload(db, event, payload);
  const rows = await db.execute(sql`
    INSERT INTO ${notifications} (id, idempotency_key, target_id, event, payload)
    SELECT gen_random_uuid()::text, ${event} || ':' || ${subjectId} || ':' || t.id, t.id, ${event}, ${JSON.stringify(stored)}::jsonb
    FROM ${notificationTargets} t
    WHERE t.enabled AND t.events ? ${event}
      AND (${event} <> 'new_item' OR t.min_amount_cents IS NULL OR coalesce(${amountCents}::int, 0) >= t.min_amount_cents)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id`);
  const list = Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows;
  return list.length;
}

/**
 * A notification's payload as stored: about a thread, what it says (a decision's title, the customer's name, an
 * error) sealed under the thread's key beside its event and thread, which stay plain (`{event, threadId, sealed}`);
 * about an erased customer's thread, only that it was (`erased: true`). Opened when claimed for delivery.
 */
async function sealedPayload(
  db: Queryable,
  event: string,
  payload: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const threadId = typeof payload.threadId === "string" ? payload.threadId : null;
  if (!threadId) return { event, ...payload };
  const sealed = (await rowSealer(db, threadId, "mark", "sealed-records")).json(payload);
  if (isErasedValue(sealed)) return { event, threadId, erased: true };
  return isSealedJson(sealed) ? { event, threadId, sealed } : { event, ...payload };
}

/** A claimed notification's payload, opened (see {@link sealedPayload}). */
async function openedPayload(
  db: Queryable,
  payload: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { sealed, ...plain } = payload;
  if (!isSealedJson(sealed) || typeof plain.threadId !== "string") return payload;
  const opened = await openThreadJson(db, plain.threadId, sealed);
  return isErasedValue(opened)
    ? { ...plain, erased: true }
    : { ...(opened as Record<string, unknown>), event: plain.event };
}

export interface DueNotification {
  id: string;
  idempotencyKey: string;
  event: string;
  payload: Record<string, unknown>;
  attempts: number;
  kind: string;
  target: string;
  secret: string | null;
}

/**
 * Claim due notifications (at most `limit`): each claimed row's next attempt moves `leaseMs` ahead, so another
 * instance does not send it meanwhile; `FOR UPDATE SKIP LOCKED` keeps two claimers apart.
 */
export async function claimDueNotifications({
  db,
  limit,
  leaseMs,
}: {
  db: Queryable;
  limit: number;
  leaseMs: number;
}): Promise<DueNotification[]> {
  const result: unknown = await db.execute(sql`
    UPDATE ${notifications} n SET attempts = n.attempts + 1,
      next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
    FROM ${notificationTargets} t
    WHERE t.id = n.target_id AND n.id IN (
      SELECT id FROM ${notifications} WHERE status = 'queued' AND next_attempt_at <= now()
      ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING n.id, n.idempotency_key AS "idempotencyKey", n.event, n.payload, n.attempts, t.kind, t.target, t.secret`);
  const due = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as DueNotification[];
  return Promise.all(due.map(async (n) => ({ ...n, payload: await openedPayload(db, n.payload) })));
}

/** Record one attempt's outcome: delivered, retried after `retryInMs`, or failed for good. */
export async function settleNotification({
  db,
  id,
  outcome,
}: {
  db: Queryable;
  id: string;
  outcome: { ok: true } | { ok: false; error: string; retryInMs: number | null };
}) {
  await db
    .update(notifications)
    .set(
      outcome.ok
        ? { status: "delivered", deliveredAt: sql`now()`, lastError: null }
        : outcome.retryInMs === null
          ? { status: "failed", lastError: outcome.error.slice(0, 500) }
          : {
              lastError: outcome.error.slice(0, 500),
              nextAttemptAt: sql`now() + make_interval(secs => ${outcome.retryInMs / 1000})`,
            },
    )
    .where(eq(notifications.id, id));
}

/**
 * Emails of the enabled users of a role (email notifications go to a role). About a thread (`threadId`), only those
 * who may see it (teams): when a team owns its agent, the team's members and those whose role sees every team — a
 * team's escalations stay within it.
 */
export async function emailsOfRole({
  db,
  role,
  threadId,
  seeAll = [],
}: {
  db: Queryable;
  role: string;
  threadId?: string;
  /** The roles that see every team's threads. */
  seeAll?: readonly string[];
}): Promise<string[]> {
  const inScope = threadId
    ? sql`(${seeAll.includes(role)} OR NOT EXISTS (
          SELECT 1 FROM team_agents ta JOIN threads t ON t.agent_id = ta.agent_id WHERE t.id = ${threadId})
        OR EXISTS (
          SELECT 1 FROM team_agents ta JOIN threads t ON t.agent_id = ta.agent_id
            JOIN team_members tm ON tm.team_id = ta.team_id
          WHERE t.id = ${threadId} AND tm.user_id = ${authUsers.id}))`
    : undefined;
  const rows = await db
    .select({ email: authUsers.email })
    .from(authUsers)
    .where(and(eq(authUsers.role, role), eq(authUsers.disabled, false), inScope));
  return rows.map((r) => r.email);
}

/** Pending decisions raised in the last `withinSeconds` (for `new_item`). */
export async function listRecentlyRaised({ db, withinSeconds }: { db: Queryable; withinSeconds: number }) {
  const rows = await db
    .select({
      interruptId: decisions.interruptId,
      threadId: decisions.threadId,
      action: decisions.action,
      title: decisions.title,
      amountCents: decisions.amountCents,
    })
    .from(decisions)
    .where(
      and(
        sql`${decisions.status} = 'pending'`,
        sql`${decisions.createdAt} > now() - make_interval(secs => ${withinSeconds})`,
      ),
    )
    .limit(500);
  // The title is sealed under the thread's key (lib/db/queries/decisions.ts): opened for the notification.
  return openedDecisions(db, rows);
}

/** Effects that failed, or whose outcome became unknown, in the last `withinSeconds` (for `effect_failed`). */
export async function listRecentlyFailedEffects({
  db,
  withinSeconds,
}: {
  db: Queryable;
  withinSeconds: number;
}) {
  const rows = await db
    .select({ id: effects.id, threadId: effects.threadId, kind: effects.kind, lastError: effects.lastError })
    .from(effects)
    .where(
      and(
        inArray(effects.status, [...OPEN_TASK_STATUSES]),
        lte(sql`now() - make_interval(secs => ${withinSeconds})`, effects.updatedAt),
      ),
    )
    .limit(500);
  // The errors are sealed under their threads' keys (effects.ts): opened for the notification, which seals them again.
  return Promise.all(
    rows.map(async (r) => ({
      ...r,
      lastError: r.lastError && (await openThreadText(db, r.threadId, r.lastError)),
    })),
  );
}

/** Who a decision's escalation went to: each notification target it was sent to, and whether it arrived. */
export interface EscalationRecipient {
  interruptId: string;
  /** webhook | email */
  kind: string;
  /** The webhook's host, or the role whose users were emailed. */
  target: string;
  /** queued | delivered | failed */
  status: string;
}

/** The escalation notifications of these decisions (keyed `escalated:<interrupt id>:<target id>`). */
export async function listEscalationRecipients({
  db,
  interruptIds,
}: {
  db: Queryable;
  interruptIds: string[];
}): Promise<EscalationRecipient[]> {
  if (interruptIds.length === 0) return [];
  const rows = await db
    .select({
      key: notifications.idempotencyKey,
      kind: notificationTargets.kind,
      target: notificationTargets.target,
      status: notifications.status,
    })
    .from(notifications)
    .innerJoin(notificationTargets, eq(notificationTargets.id, notifications.targetId))
    .where(
      and(
        eq(notifications.event, "escalated"),
        inArray(sql<string>`split_part(${notifications.idempotencyKey}, ':', 2)`, interruptIds),
      ),
    )
    .orderBy(asc(notifications.createdAt));
  return rows.map((r) => ({
    interruptId: r.key.split(":")[1] ?? "",
    kind: r.kind,
    // A webhook's URL may carry a token in its path or query: only its host is shown.
    target: r.kind === "webhook" ? hostOf(r.target) : r.target,
    status: r.status,
  }));
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "webhook";
  }
}
