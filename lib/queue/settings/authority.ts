import "server-only";
import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import {
  type AuthorityLimit,
  authorityLimitExists,
  authoritySubjectExists,
  listAuthorityLimits,
  removeAuthorityLimit,
  setAuthorityLimit,
} from "@/lib/db/queries/authority";
import type { Queryable } from "@/lib/db/tx";
import { hasAgent } from "@/lib/runtime/agents/registry";

/*
 * Delegated authority (admin settings, issue 57): money limits per person and per team, per decision and per day, for
 * every agent and question kind or one of them. Enforced where every decision is taken (lib/runtime/agents/authority.ts).
 * Every change is audited with what it was and what it is.
 */

const cents = z.number().int("whole cents").min(0).max(1_000_000_000).nullable();

/** A limit as `POST /api/admin/authority` takes it; `remove` takes one away by its id. */
export const authorityChange = z.union([
  z.strictObject({
    subjectKind: z.enum(["user", "team"]),
    subjectId: z.string().min(1).max(200),
    agentId: z.string().min(1).max(100).nullable().default(null),
    action: z.string().min(1).max(100).nullable().default(null),
    perDecisionCents: cents.default(null),
    perDayCents: cents.default(null),
    perCustomer30dCents: cents.default(null),
  }),
  z.strictObject({ remove: z.string().min(1).max(200) }),
]);
export type AuthorityChange = z.infer<typeof authorityChange>;

export async function readAuthority({ db }: { db: AppDb }): Promise<{ limits: AuthorityLimit[] }> {
  return { limits: await listAuthorityLimits({ db }) };
}

/** Whether a change can be applied now: 422 `unprocessable:authority_limit` naming what it refers to that is not there. */
export async function checkAuthorityChange({ db, change }: { db: Queryable; change: AuthorityChange }) {
  if ("remove" in change) {
    if (!(await authorityLimitExists({ db, id: change.remove }))) {
      throw new AppError("not_found:authority_limit", `There is no limit ${change.remove}.`);
    }
    return;
  }
  if (
    change.perDecisionCents === null &&
    change.perDayCents === null &&
    change.perCustomer30dCents === null
  ) {
    throw new AppError(
      "unprocessable:authority_limit",
      "A limit caps something: per decision, per day, per customer.",
      {
        fields: ["perDecisionCents", "perDayCents", "perCustomer30dCents"],
      },
    );
  }
  if (change.agentId !== null && !hasAgent(change.agentId)) {
    throw new AppError("unprocessable:authority_limit", `There is no agent ${change.agentId}.`, {
      fields: ["agentId"],
    });
  }
  if (!(await authoritySubjectExists({ db, kind: change.subjectKind, id: change.subjectId }))) {
    throw new AppError(
      "unprocessable:authority_limit",
      `There is no ${change.subjectKind} ${change.subjectId}.`,
      {
        fields: ["subjectId"],
      },
    );
  }
}

/** Apply a checked change inside the caller's transaction (audited): the limits after it. */
export async function applyAuthorityChange({
  db,
  change,
  by,
}: {
  db: Queryable;
  change: AuthorityChange;
  by: Principal;
}): Promise<{ limits: AuthorityLimit[] }> {
  await checkAuthorityChange({ db, change });
  if ("remove" in change) await removeAuthorityLimit({ db, id: change.remove, by });
  else await setAuthorityLimit({ db, limit: change, by });
  return { limits: await listAuthorityLimits({ db }) };
}
