import "server-only";
import { randomUUID } from "node:crypto";
import { asc, eq, sql } from "drizzle-orm";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { rowsOf } from "../rows";
import { type AuthorityLimit, authorityLimits } from "../schema";
import type { Queryable } from "../tx";
import { recordAudit } from "./audit";

/*
 * Delegated authority (issue 57): the money limits set per person and per team, and what a person or a team has let
 * leave today by their decisions (the amounts their decisions' receipts authorized).
 */

export type { AuthorityLimit };

/** A limit as an admin sets it (null amounts: no cap of that kind). */
export interface AuthorityLimitInput {
  subjectKind: "user" | "team";
  subjectId: string;
  agentId: string | null;
  action: string | null;
  perDecisionCents: number | null;
  perDayCents: number | null;
  perCustomer30dCents: number | null;
}

export async function listAuthorityLimits({ db }: { db: Queryable }): Promise<AuthorityLimit[]> {
  return db
    .select()
    .from(authorityLimits)
    .orderBy(asc(authorityLimits.subjectKind), asc(authorityLimits.subjectId), asc(authorityLimits.agentId));
}

/**
 * Set (or replace) the limit of one subject and scope; audited with what it was and what it is. The change was checked
 * by its setting (lib/queue/settings/authority.ts): it names a user or team and caps something.
 */
export async function setAuthorityLimit({
  db,
  limit,
  by,
}: {
  db: Queryable;
  limit: AuthorityLimitInput;
  by: Principal;
}): Promise<AuthorityLimit> {
  const [before] = rowsOf<{
    id: string;
    per_decision_cents: number | null;
    per_day_cents: number | null;
    per_customer_30d_cents: number | null;
  }>(
    await db.execute(sql`SELECT id, per_decision_cents, per_day_cents, per_customer_30d_cents FROM authority_limits
      WHERE subject_kind = ${limit.subjectKind} AND subject_id = ${limit.subjectId}
        AND coalesce(agent_id, '') = ${limit.agentId ?? ""} AND coalesce(action, '') = ${limit.action ?? ""}`),
  );
  const values = {
    perDecisionCents: limit.perDecisionCents,
    perDayCents: limit.perDayCents,
    perCustomer30dCents: limit.perCustomer30dCents,
    setBy: by.id,
    updatedAt: new Date(),
  };
  const [row] = before
    ? await db.update(authorityLimits).set(values).where(eq(authorityLimits.id, before.id)).returning()
    : await db
        .insert(authorityLimits)
        .values({ id: randomUUID(), ...limit, ...values })
        .returning();
  if (!row) throw new Error("setAuthorityLimit: no row");
  await auditLimit(
    db,
    by,
    row,
    before
      ? {
          perDecisionCents: before.per_decision_cents,
          perDayCents: before.per_day_cents,
          perCustomer30dCents: before.per_customer_30d_cents,
        }
      : null,
  );
  return row;
}

/** What a limit caps. */
function capsOf(row: AuthorityLimit) {
  return {
    perDecisionCents: row.perDecisionCents,
    perDayCents: row.perDayCents,
    perCustomer30dCents: row.perCustomer30dCents,
  };
}

/** The audit entry of a change to a limit: whose, over what, what it was and what it is (null: none). */
function auditLimit(
  db: Queryable,
  by: Principal,
  row: AuthorityLimit,
  before: Pick<AuthorityLimit, "perDecisionCents" | "perDayCents" | "perCustomer30dCents"> | null,
  removed = false,
) {
  return recordAudit({
    db,
    entries: [
      {
        action: "authority_changed",
        actor: by,
        detail: {
          limitId: row.id,
          subject: { kind: row.subjectKind, id: row.subjectId },
          scope: { agent: row.agentId, action: row.action },
          before,
          after: removed ? null : capsOf(row),
        },
      },
    ],
  });
}

/** Remove a limit (audited with what it was); 404 `not_found:authority_limit` when there is none. */
export async function removeAuthorityLimit({ db, id, by }: { db: Queryable; id: string; by: Principal }) {
  const [row] = await db.delete(authorityLimits).where(eq(authorityLimits.id, id)).returning();
  if (!row) throw new AppError("not_found:authority_limit", `There is no limit ${id}.`);
  await auditLimit(db, by, row, capsOf(row), true);
}

/** The limits that bind `userId` deciding a question of `action` for `agentId`: their own and their teams'. */
export async function limitsBinding({
  db,
  userId,
  agentId,
  action,
}: {
  db: Queryable;
  userId: string;
  agentId: string;
  action: string;
}): Promise<(AuthorityLimit & { subjectName: string })[]> {
  return rowsOf<AuthorityLimit & { subjectName: string }>(
    await db.execute(sql`SELECT l.id, l.subject_kind AS "subjectKind", l.subject_id AS "subjectId", l.agent_id AS "agentId",
        l.action, l.per_decision_cents AS "perDecisionCents", l.per_day_cents AS "perDayCents",
        l.per_customer_30d_cents AS "perCustomer30dCents", l.set_by AS "setBy",
        l.updated_at AS "updatedAt", coalesce(t.name, 'you') AS "subjectName"
      FROM authority_limits l LEFT JOIN teams t ON l.subject_kind = 'team' AND t.id = l.subject_id
      WHERE ((l.subject_kind = 'user' AND l.subject_id = ${userId})
          OR (l.subject_kind = 'team' AND l.subject_id IN (SELECT team_id FROM team_members WHERE user_id = ${userId})))
        AND (l.agent_id IS NULL OR l.agent_id = ${agentId})
        AND (l.action IS NULL OR l.action = ${action})
      ORDER BY l.subject_kind DESC, l.id`),
  );
}

/**
 * The money a subject's decisions let leave, in the scope of a limit: the amounts the receipts of the decisions taken
 * by the person (a team: by any of its members) authorized — since the start of today (UTC), or over the last 30 days
 * on the threads of one customer (their data subject).
 */
export async function spentBy({
  db,
  limit,
  customer,
}: {
  db: Queryable;
  limit: Pick<AuthorityLimit, "subjectKind" | "subjectId" | "agentId" | "action">;
  /** The customer's data subject: the last 30 days on their threads (else: today, every thread). */
  customer?: string;
}): Promise<number> {
  const deciders =
    limit.subjectKind === "user"
      ? sql`ARRAY[${limit.subjectId}]::text[]`
      : sql`ARRAY(SELECT user_id FROM team_members WHERE team_id = ${limit.subjectId})`;
  const window =
    customer === undefined
      ? sql`d.resolved_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
      : sql`d.resolved_at >= now() - interval '30 days' AND th.subject_id = ${customer}`;
  const [row] = rowsOf<{ spent: string | null }>(
    await db.execute(sql`SELECT sum((ra.terms->>'amountCents')::bigint) AS spent
      FROM decisions d
      JOIN receipt_authorizations ra ON ra.receipt_id = d.interrupt_id
      JOIN threads th ON th.id = d.thread_id
      WHERE d.resolved_by_id = ANY(${deciders})
        AND ${window}
        AND ra.terms ? 'amountCents'
        AND (${limit.agentId}::text IS NULL OR th.agent_id = ${limit.agentId})
        AND (${limit.action}::text IS NULL OR d.action = ${limit.action})`),
  );
  return Number(row?.spent ?? 0);
}

/** Serialize decisions against one subject's daily limit (two approvals at once cannot both fit in what is left). */
export async function lockAuthority({ db, limitId }: { db: Queryable; limitId: string }): Promise<void> {
  await db.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`authority:${limitId}`}))`);
}

/** The people (operators and above) no limit stops from deciding `amountCents` at once, for a refusal to name. */
export async function coveredBy({
  db,
  amountCents,
  agentId,
  action,
  except,
}: {
  db: Queryable;
  amountCents: number;
  agentId: string;
  action: string;
  except: string;
}): Promise<string[]> {
  const rows = rowsOf<{ email: string }>(
    await db.execute(sql`SELECT u.email FROM auth_users u
      WHERE u.id <> ${except} AND u.role IN ('operator', 'supervisor', 'admin') AND NOT u.disabled
        AND NOT EXISTS (
          SELECT 1 FROM authority_limits l
          WHERE ((l.subject_kind = 'user' AND l.subject_id = u.id)
              OR (l.subject_kind = 'team' AND l.subject_id IN (SELECT team_id FROM team_members WHERE user_id = u.id)))
            AND (l.agent_id IS NULL OR l.agent_id = ${agentId}) AND (l.action IS NULL OR l.action = ${action})
            AND l.per_decision_cents < ${amountCents})
      ORDER BY CASE u.role WHEN 'supervisor' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.email
      LIMIT 5`),
  );
  return rows.map((r) => r.email);
}

/** Whether the user or team a limit is for exists. */
export async function authoritySubjectExists({
  db,
  kind,
  id,
}: {
  db: Queryable;
  kind: "user" | "team";
  id: string;
}): Promise<boolean> {
  const rows = rowsOf(
    await db.execute(
      kind === "user"
        ? sql`SELECT 1 FROM auth_users WHERE id = ${id}`
        : sql`SELECT 1 FROM teams WHERE id = ${id}`,
    ),
  );
  return rows.length > 0;
}

/** Whether a limit with this id exists. */
export async function authorityLimitExists({ db, id }: { db: Queryable; id: string }): Promise<boolean> {
  return rowsOf(await db.execute(sql`SELECT 1 FROM authority_limits WHERE id = ${id}`)).length > 0;
}
