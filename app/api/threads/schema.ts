import { z } from "zod";
import { centsParam, durationParam, limitParam } from "@/lib/contract/params";
import { INTERRUPT_ACTIONS } from "@/lib/contract/questions/contract";
import { INBOX_STATUSES } from "@/lib/contract/wire";

/**
 * Body of `POST /api/threads`: a customer ticket. `agent` and `title` are the console's; every other field is the
 * agent's own (its `intake` schema: `message` always, `orderRef` for the shop's agents), read once the agent is known.
 */
export const createThreadBody = z
  .looseObject({
    /** Which agent handles the ticket (a registered agent id, e.g. `refund`, `account_change`); default `refund`. */
    agent: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,63}$/, "must be an agent id such as refund")
      .optional(),
    /** Short title for the inbox; derived from the message when absent. */
    title: z.string().trim().min(1).max(200).optional(),
  })
  .transform(({ agent, title, ...fields }) => ({ agent, title, fields }));

export type CreateThreadBody = z.infer<typeof createThreadBody>;

/** Actions the inbox filters on: the interrupt contract's, plus "unknown" for payloads outside it. */
const INBOX_ACTIONS = [...INTERRUPT_ACTIONS, "unknown"] as const;

/**
 * Query of `GET /api/threads` (the inbox). Without `status`, or with `status=pending`: pending decisions oldest first,
 * filtered by `action`, amount range and minimum age. Any other status lists threads newest-updated first. Unknown
 * parameters are refused, so a misspelt filter is not silently ignored.
 */
export const inboxQuery = z
  .strictObject({
    status: z.enum(INBOX_STATUSES).default("pending"),
    action: z.enum(INBOX_ACTIONS).optional(),
    /** Minimum amount in cents (only decisions that have an amount). */
    minAmount: centsParam.optional(),
    /** Maximum amount in cents (only decisions that have an amount). */
    maxAmount: centsParam.optional(),
    /** Minimum age: a number and a unit, `90s`, `15m`, `2h`, `3d`. */
    olderThan: durationParam.optional(),
    /** `me`: decisions the caller is handling ("My queue"); `none`: decisions nobody is handling ("Unassigned"). */
    assigned: z.enum(["me", "none"]).optional(),
    /** `true`: only overdue decisions that were escalated. */
    escalated: z.enum(["true"]).optional(),
    /** `agent@version`, e.g. `refund@1`: only decisions of threads pinned to that version (retiring a version). */
    version: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,39}@\d{1,6}(\.\d{1,6}){0,3}$/, "an agent and its version, like refund@1")
      .optional(),
    /** `nextCursor` of the previous page. */
    cursor: z.string().min(1).max(1000).optional(),
    limit: limitParam(200, 50),
  })
  .refine((q) => q.minAmount === undefined || q.maxAmount === undefined || q.minAmount <= q.maxAmount, {
    message: "minAmount must not exceed maxAmount",
    path: ["minAmount"],
  })
  .refine(
    (q) =>
      q.status === "pending" ||
      (q.action === undefined &&
        q.minAmount === undefined &&
        q.maxAmount === undefined &&
        q.olderThan === undefined &&
        q.assigned === undefined &&
        q.escalated === undefined &&
        q.version === undefined),
    {
      message:
        "action, minAmount, maxAmount, olderThan, assigned, escalated and version filter pending decisions: use them with status=pending",
      path: ["status"],
    },
  );

export type InboxQuery = z.infer<typeof inboxQuery>;

/**
 * The `listInbox` arguments for a parsed inbox query (shared by the API route and the inbox page); `userId` is the
 * caller, for `assigned=me`.
 */
export function inboxListArgs(query: InboxQuery, userId: string) {
  return {
    status: query.status,
    filter: {
      action: query.action,
      minAmountCents: query.minAmount,
      maxAmountCents: query.maxAmount,
      olderThanSeconds: query.olderThan,
      claimedBy: query.assigned === "me" ? userId : query.assigned === "none" ? null : undefined,
      escalated: query.escalated === "true" ? true : undefined,
      agentVersion: query.version
        ? {
            agentId: query.version.slice(0, query.version.indexOf("@")),
            version: query.version.slice(query.version.indexOf("@") + 1),
          }
        : undefined,
    },
    cursor: query.cursor,
    limit: query.limit,
  };
}

/** Body of `POST /api/threads/{id}/fork` (and of its dry check, `…/fork/check`). */
export const forkBody = z.strictObject({
  checkpointId: z.string().min(1).max(200),
  /** State edits applied on the branch before it runs: only the agent's editable fields (422 naming any other). */
  values: z.unknown().optional(),
  /** Apply `values` as if this node wrote them (decides what runs next): one of the agent's fork nodes. */
  asNode: z.string().min(1).max(100).optional(),
  /** `current`: branch onto the agent's current version (for a thread whose version is no longer deployed). */
  onto: z.literal("current").optional(),
});
export type ForkBody = z.infer<typeof forkBody>;
