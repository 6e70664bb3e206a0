import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { AppError, errorCodeOf } from "@/lib/contract/errors";
import { rowsOf } from "@/lib/db/rows";
import type { Queryable } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";
import { hasRole, type Principal, ROLES, type Role, type SessionUser } from "../contract/roles";
import { cachedCredential } from "./session-cache";

/*
 * What a principal may see of the threads (issue 33, teams). A team owns agents; a user below TEAMS_SEE_ALL_ROLE sees
 * the threads of agents no team owns and of their own teams' agents — nothing else, anywhere: lists, search, the live
 * feed, and every route that names a thread or a decision, which answers as if it did not exist (404, never 403: a
 * 403 would say it is there). Intake keys and the server's own jobs are not people and are not scoped.
 */

export interface TeamScope {
  /** Agents whose threads this principal may not see (owned by teams they are not in). Empty: every thread. */
  hiddenAgents: string[];
}

const EVERYTHING: TeamScope = { hiddenAgents: [] };

/**
 * The principal's scope: one small read of the agents owned by teams they are not in, kept beside their session in
 * the session cache (`cachedCredential`): any change to the teams tables NOTIFYs `hitl_auth` (migration 0035), which
 * empties it, and the cache serves only while that is heard.
 */
export async function teamScope(db: Queryable, principal: Principal | null | undefined): Promise<TeamScope> {
  if (principal?.kind !== "user" || hasRole(principal.role, env.TEAMS_SEE_ALL_ROLE)) return EVERYTHING;
  const scope = await cachedCredential(`teams:${principal.id}`, async () => {
    const rows = rowsOf<{ agent_id: string }>(
      await db.execute(sql`SELECT ta.agent_id FROM team_agents ta
        WHERE NOT EXISTS (SELECT 1 FROM team_members tm WHERE tm.team_id = ta.team_id AND tm.user_id = ${principal.id})`),
    );
    return { value: { hiddenAgents: rows.map((r) => r.agent_id) } satisfies TeamScope };
  });
  // Never null (the lookup always answers): refuse rather than fall open to every thread.
  if (!scope) throw new Error("teams scope: the lookup gave no answer");
  return scope;
}

/** The roles that see every team's threads (TEAMS_SEE_ALL_ROLE and above). */
export function rolesSeeingEveryTeam(): Role[] {
  return ROLES.filter((r) => hasRole(r, env.TEAMS_SEE_ALL_ROLE));
}

/** Whether a thread of `agentId` is in scope. */
export function seesAgent(scope: TeamScope, agentId: string): boolean {
  return !scope.hiddenAgents.includes(agentId);
}

/** Of these threads, the ones in scope (one read; all of them when nothing is hidden). */
export async function threadsInScope(
  db: Queryable,
  scope: TeamScope,
  threadIds: string[],
): Promise<Set<string>> {
  if (scope.hiddenAgents.length === 0 || threadIds.length === 0) return new Set(threadIds);
  const rows = rowsOf<{ id: string; agent_id: string }>(
    await db.execute(
      sql`SELECT id, agent_id FROM threads WHERE id IN (${sql.join(
        [...new Set(threadIds)].map((id) => sql`${id}`),
        sql`, `,
      )})`,
    ),
  );
  return new Set(rows.filter((r) => seesAgent(scope, r.agent_id)).map((r) => r.id));
}

/**
 * Refuse a thread outside the principal's teams exactly as a thread that does not exist is refused
 * (`not_found:thread`, the same words). For a principal with hidden agents, a thread that does not exist is refused
 * here too, at the same point of the request — so nothing (not even which check answers first) tells the two apart.
 */
export function assertThreadInScope(
  db: Queryable,
  principal: Principal | null | undefined,
  threadId: string,
  scope?: TeamScope,
): Promise<void> {
  return assertAgentInScope(
    db,
    scope ?? principal,
    sql`SELECT agent_id FROM threads WHERE id = ${threadId}`,
    () => new AppError("not_found:thread", `Thread ${threadId} does not exist.`),
  );
}

/** The same for a decision, by its interrupt id (`not_found:interrupt`, as for one that does not exist). */
export function assertInterruptInScope(
  db: Queryable,
  principal: Principal | null | undefined,
  interruptId: string,
  scope?: TeamScope,
): Promise<void> {
  return assertAgentInScope(
    db,
    scope ?? principal,
    sql`SELECT t.agent_id FROM decisions d JOIN threads t ON t.id = d.thread_id WHERE d.interrupt_id = ${interruptId}`,
    () => new AppError("not_found:interrupt", `Interrupt ${interruptId} does not exist.`),
  );
}

/** The one check behind both: the agent `lookup` finds (none: refused too) must not be hidden from the principal. */
async function assertAgentInScope(
  db: Queryable,
  scopeOrPrincipal: TeamScope | Principal | null | undefined,
  lookup: SQL,
  refusal: () => AppError,
): Promise<void> {
  const { hiddenAgents } =
    scopeOrPrincipal && "hiddenAgents" in scopeOrPrincipal
      ? scopeOrPrincipal
      : await teamScope(db, scopeOrPrincipal);
  if (hiddenAgents.length === 0) return;
  const [row] = rowsOf<{ agent_id: string }>(await db.execute(lookup));
  if (!row || hiddenAgents.includes(row.agent_id)) throw refusal();
}

/** A signed-in page user as the principal the scope is read for. */
export function principalOfUser(user: SessionUser): Principal {
  return { kind: "user", id: user.id, label: user.email, role: user.role };
}

/** Whether a page user may see this thread (a thread that does not exist: no). */
export async function pageSeesThread(db: Queryable, user: SessionUser, threadId: string): Promise<boolean> {
  try {
    await assertThreadInScope(db, principalOfUser(user), threadId);
    return true;
  } catch (error) {
    if (errorCodeOf(error) === "not_found:thread") return false;
    throw error;
  }
}
