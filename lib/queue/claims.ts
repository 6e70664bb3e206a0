import "server-only";
import { findUserByEmail } from "@/lib/auth/users";
import { AppError } from "@/lib/contract/errors";
import { hasRole, type Principal } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import {
  type ClaimView,
  claimDecision,
  listThreadClaims,
  releaseClaim,
  renewClaims,
} from "@/lib/db/queries/claims";
import type { Queryable } from "@/lib/db/tx";
import { env } from "@/lib/platform/env";

/*
 * Claims on pending decisions: who is handling what. Advisory — they say who is on it, and the inbox and its answer
 * buttons say so — while the decision ledger stays the arbiter: `decideOne` accepts or refuses an answer by the
 * same rules whoever holds the claim.
 */

function userOf(principal: Principal): { id: string; label: string } {
  if (principal.kind !== "user") {
    throw new AppError("forbidden:claim", "Only a signed-in operator can claim a decision.");
  }
  return { id: principal.id, label: principal.label };
}

export type ClaimMode = "claim" | "take_over";

/**
 * Claim a decision for the signed-in operator (`claim`: refused with 409 `conflict:claimed` naming the holder while
 * someone else's claim is live; `take_over`: taken from them), or — a supervisor — assign it to another user by
 * email (audited). 409 `conflict:not_pending` when it is no longer pending (decided, superseded, unknown).
 */
export async function claimForPrincipal({
  db,
  principal,
  interruptId,
  mode = "claim",
  assignTo,
}: {
  db: AppDb;
  principal: Principal;
  interruptId: string;
  mode?: ClaimMode;
  assignTo?: string;
}): Promise<ClaimView> {
  const me = userOf(principal);
  let holder = me;
  if (assignTo !== undefined) {
    if (!hasRole(principal.role, "supervisor")) {
      throw new AppError("forbidden:role", "Only a supervisor can assign a decision to someone else.");
    }
    const user = await findUserByEmail({ db, email: assignTo });
    if (!user || user.disabled || !hasRole(user.role, "operator")) {
      throw new AppError("unprocessable:assignee", `${assignTo} is not an enabled operator.`, {
        fields: ["assignTo"],
      });
    }
    holder = { id: user.id, label: user.email };
  }
  const force = mode === "take_over" || assignTo !== undefined;
  return db.transaction(async (tx) => {
    const outcome = await claimDecision({
      db: tx,
      interruptId,
      user: holder,
      ttlMs: env.CLAIM_TTL_MS,
      force,
      assignedBy: assignTo !== undefined ? me.id : null,
    });
    if (outcome.status === "not_pending") {
      throw new AppError("conflict:not_pending", "This decision is no longer pending.", { interruptId });
    }
    if (outcome.status === "held") {
      throw new AppError(
        "conflict:claimed",
        `Being handled by ${outcome.claim.userLabel} since ${outcome.claim.claimedAt}.`,
        { claim: outcome.claim },
      );
    }
    if (assignTo !== undefined) {
      await recordAudit({
        db: tx,
        entries: [
          {
            action: "claim_assigned",
            actor: principal,
            interruptId,
            threadId: null,
            detail: { assignee: holder.label },
          },
        ],
      });
    }
    return outcome.claim;
  });
}

/** Release the operator's own claim; a supervisor may release anyone's. */
export async function releaseForPrincipal({
  db,
  principal,
  interruptId,
}: {
  db: AppDb;
  principal: Principal;
  interruptId: string;
}): Promise<boolean> {
  const me = userOf(principal);
  return releaseClaim({ db, interruptId, userId: me.id, anyone: hasRole(principal.role, "supervisor") });
}

/** The heartbeat of an open tab: every live claim of the operator holds for another TTL. */
export async function renewForPrincipal({ db, principal }: { db: AppDb; principal: Principal }) {
  const me = userOf(principal);
  return {
    renewed: await renewClaims({ db, userId: me.id, ttlMs: env.CLAIM_TTL_MS }),
    ttlMs: env.CLAIM_TTL_MS,
  };
}

/** Who is handling a thread's pending decisions: their live claims (the thread page and `GET /api/inbox/claims`). */
export function listClaimsOnThread({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<ClaimView[]> {
  return listThreadClaims({ db, threadId });
}
