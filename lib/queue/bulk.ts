import "server-only";
import { type TeamScope, threadsInScope } from "@/lib/auth/teams";
import { AppError } from "@/lib/contract/errors";
import { operatorSentence } from "@/lib/contract/operator-messages";
import type { Principal } from "@/lib/contract/roles";
import type { Database } from "@/lib/db/open";
import { claimDecision, getLiveClaims, releaseClaim } from "@/lib/db/queries/claims";
import { getDecisions } from "@/lib/db/queries/decisions";
import { env } from "@/lib/platform/env";
import { mayDecide } from "@/lib/runtime/agents/may-decide";
import { decideAndResume } from "@/lib/runtime/runs/decide";
import { asAppError } from "./app-error";
import { type BulkVerb, bulkAnswer, isBulkAction } from "./bulk-answers";

export interface BulkOutcome {
  done: { interruptId: string; threadId: string }[];
  refused: { interruptId: string; threadId: string | null; code: string; message: string }[];
}

/**
 * Approve or reject several pending decisions of one action with one note. Each goes its own way, exactly as if it
 * were decided alone: claimed first (refused while someone else handles it), then decided through the ledger —
 * contract, four-eyes and the decision policy are checked per item by `decideAndResume`. Nothing is all-or-nothing:
 * the outcome lists what was done and what was refused, with the error code and message of each refusal.
 */
export async function decideInBulk({
  database,
  principal,
  interruptIds,
  verb,
  note,
  scope = { hiddenAgents: [] },
}: {
  /** The route's whole handle: a decision that completes its step starts the resume run. */
  database: Database;
  principal: Principal;
  /** The operator's teams: a decision of another team's thread is as unknown as one that does not exist. */
  scope?: TeamScope;
  interruptIds: string[];
  verb: BulkVerb;
  note?: string;
}): Promise<BulkOutcome> {
  if (principal.kind !== "user") {
    throw new AppError("forbidden:api_key_scope", "Bulk decisions need a signed-in operator.");
  }
  const { db } = database;
  const found = await getDecisions({ db, interruptIds });
  const inScope = await threadsInScope(
    db,
    scope,
    found.map((d) => d.threadId),
  );
  const rows = found.filter((d) => inScope.has(d.threadId));
  const actions = new Set(rows.map((d) => d.action));
  if (actions.size > 1) {
    throw new AppError("unprocessable:bulk_mixed", "Bulk decisions take items of one kind at a time.", {
      actions: [...actions],
    });
  }
  const [action] = [...actions];
  if (action !== undefined && !isBulkAction(action)) {
    throw new AppError("unprocessable:bulk_action", `${action} items are decided one by one.`, { action });
  }
  if (verb === "reject" && !note?.trim() && action !== "confirm_email") {
    throw new AppError("unprocessable:bulk_note", "Say why: rejecting needs a note.", { fields: ["note"] });
  }
  const byId = new Map(rows.map((d) => [d.interruptId, d]));
  // Claims this operator already held before the request: a refused attempt leaves them as they were.
  const heldBefore = new Set(
    (await getLiveClaims({ db, interruptIds: [...byId.keys()] }))
      .filter((c) => c.userId === principal.id)
      .map((c) => c.interruptId),
  );
  const outcome: BulkOutcome = { done: [], refused: [] };
  for (const interruptId of new Set(interruptIds)) {
    const decision = byId.get(interruptId);
    if (!decision) {
      outcome.refused.push({
        interruptId,
        threadId: null,
        code: "not_found:decision",
        message: "No such decision.",
      });
      continue;
    }
    const threadId = decision.threadId;
    const payload = bulkAnswer(decision.action, verb, note?.trim() || undefined);
    // The policy first: a refused item is not even claimed (nothing written, no one's inbox moves). The decision
    // itself checks again, under its lock.
    const verdict = (
      await mayDecide({ db, threadId, principal, answers: new Map([[interruptId, payload]]) })
    ).find((v) => v.interruptId === interruptId);
    if (verdict && !verdict.may) {
      outcome.refused.push({
        interruptId,
        threadId,
        code: verdict.code,
        message: operatorSentence({ code: verdict.code, message: verdict.reason }),
      });
      continue;
    }
    const claim = await claimDecision({
      db,
      interruptId,
      user: { id: principal.id, label: principal.label },
      ttlMs: env.CLAIM_TTL_MS,
    });
    if (claim.status !== "claimed") {
      outcome.refused.push(
        claim.status === "held"
          ? {
              interruptId,
              threadId,
              code: "conflict:claimed",
              message: `Being handled by ${claim.claim.userLabel}.`,
            }
          : { interruptId, threadId, code: "conflict:not_pending", message: "No longer pending." },
      );
      continue;
    }
    try {
      await decideAndResume({
        database,
        threadId,
        entry: { interruptId, status: "resolved", payload },
        principal,
        channel: "bulk",
      });
      outcome.done.push({ interruptId, threadId });
    } catch (error) {
      const e = asAppError(error, "bulk decision");
      // In the operator's words, as the thread page says the same refusal (never a validator's text).
      outcome.refused.push({ interruptId, threadId, code: e.code, message: operatorSentence(e) });
      // A claim taken only for this attempt is let go; one the operator held before stays theirs.
      if (!heldBefore.has(interruptId)) {
        await releaseClaim({ db, interruptId, userId: principal.id }).catch(() => {});
      }
    }
  }
  return outcome;
}
