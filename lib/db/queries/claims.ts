import "server-only";
import { and, eq, inArray, lte, sql } from "drizzle-orm";
import type { ClaimView } from "@/lib/contract/views/claims";
import { decisionClaims, decisions } from "../schema";
import type { Queryable } from "../tx";

/** The claim's shape is the browser's (lib/contract/views/claims.ts). */
export type { ClaimView };

const claimView = {
  interruptId: decisionClaims.interruptId,
  userId: decisionClaims.userId,
  userLabel: decisionClaims.userLabel,
  assignedBy: decisionClaims.assignedBy,
  claimedAt: sql<string>`to_char(${decisionClaims.claimedAt} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  expiresAt: sql<string>`to_char(${decisionClaims.expiresAt} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
};

export type ClaimOutcome =
  | { status: "claimed"; claim: ClaimView }
  /** Someone else holds a live claim (and `force` was not given). */
  | { status: "held"; claim: ClaimView }
  /** The decision is not pending (decided, superseded) or does not exist. */
  | { status: "not_pending" };

/**
 * Claim a pending decision for `user` for `ttlMs`, in one statement: a new claim, a renewal of one's own, or taking
 * over an expired one; with `force` also a live claim of someone else (take-over, or a supervisor's assignment).
 * Claiming again restarts `claimed_at` only when the holder changes.
 */
export async function claimDecision({
  db,
  interruptId,
  user,
  ttlMs,
  force = false,
  assignedBy = null,
}: {
  db: Queryable;
  interruptId: string;
  user: { id: string; label: string };
  ttlMs: number;
  force?: boolean;
  assignedBy?: string | null;
}): Promise<ClaimOutcome> {
  const expires = sql`now() + make_interval(secs => ${ttlMs / 1000})`;
  const rows = await db
    .insert(decisionClaims)
    .select(
      db
        .select({
          interruptId: decisions.interruptId,
          threadId: decisions.threadId,
          userId: sql`${user.id}::text`.as("user_id"),
          userLabel: sql`${user.label}::text`.as("user_label"),
          assignedBy: sql`${assignedBy}::text`.as("assigned_by"),
          claimedAt: sql`now()`.as("claimed_at"),
          expiresAt: sql`${expires}`.as("expires_at"),
        })
        .from(decisions)
        .where(and(eq(decisions.interruptId, interruptId), sql`${decisions.status} = 'pending'`)),
    )
    .onConflictDoUpdate({
      target: decisionClaims.interruptId,
      set: {
        userId: sql`excluded.user_id`,
        userLabel: sql`excluded.user_label`,
        assignedBy: sql`excluded.assigned_by`,
        claimedAt: sql`CASE WHEN ${decisionClaims.userId} = excluded.user_id THEN ${decisionClaims.claimedAt} ELSE now() END`,
        expiresAt: sql`excluded.expires_at`,
      },
      setWhere: force
        ? undefined
        : sql`${decisionClaims.userId} = excluded.user_id OR ${decisionClaims.expiresAt} <= now()`,
    })
    .returning(claimView);
  if (rows[0]) return { status: "claimed", claim: rows[0] };
  const [held] = await db
    .select(claimView)
    .from(decisionClaims)
    .innerJoin(decisions, eq(decisions.interruptId, decisionClaims.interruptId))
    .where(and(eq(decisionClaims.interruptId, interruptId), sql`${decisions.status} = 'pending'`));
  return held ? { status: "held", claim: held } : { status: "not_pending" };
}

/** Extend every live claim `userId` holds (the heartbeat of an open tab); returns the interrupt ids renewed. */
export async function renewClaims({
  db,
  userId,
  ttlMs,
}: {
  db: Queryable;
  userId: string;
  ttlMs: number;
}): Promise<string[]> {
  const rows = await db
    .update(decisionClaims)
    .set({ expiresAt: sql`now() + make_interval(secs => ${ttlMs / 1000})` })
    .where(and(eq(decisionClaims.userId, userId), sql`${decisionClaims.expiresAt} > now()`))
    .returning({ interruptId: decisionClaims.interruptId });
  return rows.map((r) => r.interruptId);
}

/** Release `userId`'s claim of a decision (or anyone's, when `anyone`: a supervisor unassigning). */
export async function releaseClaim({
  db,
  interruptId,
  userId,
  anyone = false,
}: {
  db: Queryable;
  interruptId: string;
  userId: string;
  anyone?: boolean;
}): Promise<boolean> {
  const rows = await db
    .delete(decisionClaims)
    .where(
      anyone
        ? eq(decisionClaims.interruptId, interruptId)
        : and(eq(decisionClaims.interruptId, interruptId), eq(decisionClaims.userId, userId)),
    )
    .returning({ interruptId: decisionClaims.interruptId });
  return rows.length > 0;
}

/** Live claims of the given decisions (the thread page and bulk decisions read them). */
export async function getLiveClaims({
  db,
  interruptIds,
}: {
  db: Queryable;
  interruptIds: string[];
}): Promise<ClaimView[]> {
  if (interruptIds.length === 0) return [];
  return db
    .select(claimView)
    .from(decisionClaims)
    .where(and(inArray(decisionClaims.interruptId, interruptIds), sql`${decisionClaims.expiresAt} > now()`));
}

/** Live claims of a thread's pending decisions (the thread page shows who is handling each). */
export async function listThreadClaims({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<ClaimView[]> {
  return db
    .select(claimView)
    .from(decisions)
    .innerJoin(decisionClaims, eq(decisionClaims.interruptId, decisions.interruptId))
    .where(
      and(
        eq(decisions.threadId, threadId),
        sql`${decisions.status} = 'pending'`,
        sql`${decisionClaims.expiresAt} > now()`,
      ),
    );
}

/** Delete claims that expired more than `graceMs` ago, so the inbox feed tells every open inbox they are gone. */
export async function deleteExpiredClaims({ db, graceMs = 0 }: { db: Queryable; graceMs?: number }) {
  const rows = await db
    .delete(decisionClaims)
    .where(lte(decisionClaims.expiresAt, sql`now() - make_interval(secs => ${graceMs / 1000})`))
    .returning({ interruptId: decisionClaims.interruptId });
  return rows.length;
}
