import { z } from "zod";
import { INTERRUPT_ACTIONS } from "@/lib/interrupts/contract";

/** Body of `POST /api/threads`: a customer ticket. */
export const createThreadBody = z.object({
  /** The customer's message. */
  message: z.string().trim().min(1, "message is required").max(5000),
  /** Order reference when the ticket system knows it (e.g. ORD-1001). */
  orderRef: z
    .string()
    .trim()
    .regex(/^ORD-\d{4}$/i, "orderRef looks like ORD-1234")
    .transform((s) => s.toUpperCase())
    .optional(),
  /** Short title for the inbox; derived from the message when absent. */
  title: z.string().trim().min(1).max(200).optional(),
});

export type CreateThreadBody = z.infer<typeof createThreadBody>;

/** Actions the inbox filters on: the interrupt contract's, plus "unknown" for payloads outside it. */
const INBOX_ACTIONS = [...INTERRUPT_ACTIONS, "unknown"] as const;
const INBOX_STATUSES = ["pending", "running", "interrupted", "completed", "failed", "idle", "all"] as const;
const DURATION_UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** An amount in minor units (cents): digits only. */
const cents = z
  .string()
  .regex(/^\d{1,12}$/, "must be a whole number of cents (e.g. 25000 for 250.00)")
  .transform(Number);

/**
 * Query of `GET /api/threads` (the inbox). Without `status`, or with `status=pending`: pending decisions oldest first,
 * filtered by `action`, amount range and minimum age. Any other status lists threads newest-updated first. Unknown
 * parameters are refused, so a misspelt filter is not silently ignored.
 */
const inboxParams = z
  .object({
    status: z.enum(INBOX_STATUSES).default("pending"),
    action: z.enum(INBOX_ACTIONS).optional(),
    /** Minimum amount in cents (only decisions that have an amount). */
    minAmount: cents.optional(),
    /** Maximum amount in cents (only decisions that have an amount). */
    maxAmount: cents.optional(),
    /** Minimum age: a number and a unit, `90s`, `15m`, `2h`, `3d`. */
    olderThan: z
      .string()
      .regex(/^\d{1,7}[smhd]$/, "must be a duration like 90s, 15m, 2h or 3d")
      .transform((v) => Number(v.slice(0, -1)) * DURATION_UNITS[v.slice(-1) as keyof typeof DURATION_UNITS])
      .optional(),
    /** `nextCursor` of the previous page. */
    cursor: z.string().min(1).max(1000).optional(),
    limit: z
      .string()
      .regex(/^\d{1,4}$/, "must be a whole number")
      .transform(Number)
      .pipe(z.number().min(1, "must be at least 1").max(200, "must be at most 200"))
      .default(50),
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
        q.olderThan === undefined),
    {
      message:
        "action, minAmount, maxAmount and olderThan filter pending decisions: use them with status=pending",
      path: ["status"],
    },
  );

export const inboxQuery = z
  .record(z.string(), z.string())
  .superRefine((raw, ctx) => {
    const known = Object.keys(inboxParams.shape);
    for (const key of Object.keys(raw)) {
      if (!known.includes(key)) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `is not a parameter (known: ${known.join(", ")})`,
        });
      }
    }
  })
  .pipe(inboxParams);

export type InboxQuery = z.infer<typeof inboxQuery>;

/** The `listInbox` arguments for a parsed inbox query (shared by the API route and the inbox page). */
export function inboxListArgs(query: InboxQuery) {
  return {
    status: query.status,
    filter: {
      action: query.action,
      minAmountCents: query.minAmount,
      maxAmountCents: query.maxAmount,
      olderThanSeconds: query.olderThan,
    },
    cursor: query.cursor,
    limit: query.limit,
  };
}
