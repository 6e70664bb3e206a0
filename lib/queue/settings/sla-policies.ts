import "server-only";
import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { INTERRUPT_ACTIONS } from "@/lib/contract/questions/contract";
import { QUESTION_KINDS } from "@/lib/contract/questions/kinds";
import type { Principal } from "@/lib/contract/roles";
import type { AppDb } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import {
  deleteSlaPolicy,
  listSlaPolicies,
  type SlaPolicyView,
  upsertSlaPolicy,
} from "@/lib/db/queries/deadlines";
import type { Queryable } from "@/lib/db/tx";
import { agentsWhereSystemWouldAct } from "@/lib/runtime/agents/system-policy";

/*
 * The queue's deadline policies (admin settings): when a decision of an action and amount is due, and what
 * `system:expiry` answers once it is overdue. A change applies to decisions raised from then on.
 */

/** A change to a deadline policy (`POST /api/admin/sla`): create or replace the (action, minimum) policy, or remove it. */
export const slaPolicyChange = z.strictObject({
  /** An interrupt action, or `*` for any. */
  action: z.enum(["*", ...INTERRUPT_ACTIONS]),
  /** Applies to decisions of at least this amount (cents). */
  minAmountCents: z.number().int().min(0).max(1_000_000_000).default(0),
  /** Due this long after it is raised (1 s … 90 days). */
  dueSeconds: z
    .number()
    .int()
    .min(1)
    .max(90 * 86_400),
  /** What `system:expiry` answers once overdue (checked against the action's contract); omit for none. */
  expiryAnswer: z
    .strictObject({ status: z.enum(["resolved", "cancelled"]), payload: z.unknown().optional() })
    .nullable()
    .default(null),
  /** Remove this (action, minimum) policy instead. */
  remove: z.boolean().optional(),
});
export type SlaPolicyChange = z.infer<typeof slaPolicyChange>;

/** The deadline policies, by action, then minimum amount. */
export function readSlaPolicies({ db }: { db: Queryable }): Promise<SlaPolicyView[]> {
  return listSlaPolicies({ db });
}

/**
 * Create, replace or remove a deadline policy, in one transaction with its audit entry (the change as asked). 422
 * `unprocessable:sla` for a timer's policy or an expiry answer outside its action's contract, and
 * `unprocessable:sla_acting_answer` for an expiry answer that would act where a person must decide.
 */
export async function changeSlaPolicy({
  db,
  change,
  by,
}: {
  db: AppDb;
  change: SlaPolicyChange;
  by: Principal;
}): Promise<{ removed: boolean } | { policy: SlaPolicyView }> {
  const { remove, ...asked } = change;
  const policy = acceptedPolicy(asked);
  return db.transaction(async (tx) => {
    const id = `${policy.action}:${policy.minAmountCents}`;
    const result = remove
      ? { removed: await deleteSlaPolicy({ db: tx, id }) }
      : { policy: await upsertSlaPolicy({ db: tx, policy, by: by.id }) };
    await recordAudit({
      db: tx,
      entries: [{ action: "queue_settings", actor: by, detail: { sla: change } }],
    });
    return result;
  });
}

/** The policy as stored: refused when it cannot apply, its expiry answer as its action's contract reads it. */
function acceptedPolicy(policy: Omit<SlaPolicyChange, "remove">): Omit<SlaPolicyChange, "remove"> {
  if (policy.action === "wait_timer") {
    throw new AppError(
      "unprocessable:sla",
      "A timer is due when its own duration is up, and fires by itself: no deadline policy applies to it.",
      { fields: ["action"] },
    );
  }
  if (policy.expiryAnswer?.status !== "resolved") return policy;
  if (policy.action === "*") {
    throw new AppError(
      "unprocessable:sla",
      "An expiry answer needs one action (its contract checks the answer).",
      {
        fields: ["action"],
      },
    );
  }
  const parsed = QUESTION_KINDS[policy.action].answerShape.safeParse(policy.expiryAnswer.payload);
  if (!parsed.success) {
    throw new AppError("unprocessable:sla", `The expiry answer does not fit ${policy.action}'s contract.`, {
      fields: ["expiryAnswer"],
    });
  }
  // One policy for every principal: system:expiry may not approve, send or grant where a person must.
  const acting = agentsWhereSystemWouldAct(policy.action, parsed.data);
  if (acting.length > 0) {
    throw new AppError(
      "unprocessable:sla_acting_answer",
      `An expiry answer may only reject, cancel, hold or escalate: this answer would act on ${policy.action} (${acting.join(", ")}), which a person must decide.`,
      { fields: ["expiryAnswer"], agents: acting },
    );
  }
  return { ...policy, expiryAnswer: { status: "resolved", payload: parsed.data } };
}
