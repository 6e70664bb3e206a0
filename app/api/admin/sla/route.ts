import { z } from "zod";
import { AppError } from "@/lib/contract/errors";
import { INTERRUPT_ACTIONS } from "@/lib/contract/questions/contract";
import { QUESTION_KINDS } from "@/lib/contract/questions/kinds";
import { recordAudit } from "@/lib/db/queries/audit";
import { deleteSlaPolicy, listSlaPolicies, upsertSlaPolicy } from "@/lib/db/queries/deadlines";
import { json, route } from "@/lib/http/route";
import { agentsWhereSystemWouldAct } from "@/lib/runtime/agents/system-policy";

export const dynamic = "force-dynamic";

const policyBody = z.strictObject({
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

/** Deadline policies per action and amount (supervisors read them). */
export const GET = route({ name: "GET /api/admin/sla", access: "supervisor" }, async ({ database: { db } }) =>
  json({ policies: await listSlaPolicies({ db }) }),
);

/** Create, replace or remove a deadline policy (admin; audited). Applies to decisions raised from now on. */
export const POST = route<Record<string, never>, z.infer<typeof policyBody>>(
  {
    name: "POST /api/admin/sla",
    access: "admin",
    body: { schema: policyBody, code: "bad_request:sla", what: "The deadline policy" },
  },
  async ({ body, principal, database: { db } }) => {
    const { remove, ...policy } = body;
    if (policy.action === "wait_timer") {
      throw new AppError(
        "unprocessable:sla",
        "A timer is due when its own duration is up, and fires by itself: no deadline policy applies to it.",
        { fields: ["action"] },
      );
    }
    if (policy.expiryAnswer?.status === "resolved") {
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
        throw new AppError(
          "unprocessable:sla",
          `The expiry answer does not fit ${policy.action}'s contract.`,
          {
            fields: ["expiryAnswer"],
          },
        );
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
      policy.expiryAnswer = { status: "resolved", payload: parsed.data };
    }
    return db.transaction(async (tx) => {
      const id = `${policy.action}:${policy.minAmountCents}`;
      const result = remove
        ? { removed: await deleteSlaPolicy({ db: tx, id }) }
        : { policy: await upsertSlaPolicy({ db: tx, policy, by: principal.id }) };
      await recordAudit({
        db: tx,
        entries: [{ action: "queue_settings", actor: principal, detail: { sla: body } }],
      });
      return json(result);
    });
  },
);
