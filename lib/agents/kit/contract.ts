import "server-only";
import {
  answerJsonSchema,
  type InterruptPayload,
  parseInterruptPayload,
  summarizePayload,
  validateAnswer,
} from "@/lib/contract/questions";
import { QUESTION_KINDS } from "@/lib/contract/questions/kinds";
import type { Authorization } from "@/lib/contract/wire";
import { formatMoney } from "@/lib/contract/wire";
import type { Queryable } from "@/lib/db/tx";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";
import { sumRefundsForOrder } from "@/lib/shop/refunds";

/** The shared interrupt contract (`lib/interrupts`) as an agent's `interrupts`: for agents whose actions are in it. */
export const sharedContract: AgentDefinition<InterruptPayload>["interrupts"] = {
  parse(raw) {
    const parsed = parseInterruptPayload(raw);
    return parsed.ok
      ? { ok: true, payload: parsed.payload, action: parsed.payload.action, title: parsed.payload.title }
      : { ok: false, error: parsed.error };
  },
  validate: (payload, answer) => validateAnswer(payload, answer),
  responseSchema: (payload) => answerJsonSchema(payload),
  summarize: (raw) => summarizePayload(raw),
  // From the question kinds: the answer that acts, whose policy the console asks before the click.
  actingAnswer: (payload) =>
    (QUESTION_KINDS[payload.action].actingAnswer as (p: InterruptPayload) => unknown)(payload),
  current: async ({ db, payload }) => currentRefundApproval(db, payload),
  // From the question kinds: what an answer authorizes, for its receipt.
  authorizes: (payload, answer) =>
    (
      QUESTION_KINDS[payload.action].authorizes as (
        p: InterruptPayload,
        a: Record<string, unknown>,
      ) => Authorization[]
    )(payload, answer !== null && typeof answer === "object" ? (answer as Record<string, unknown>) : {}),
};

/** The finding of a refund approval whose order was refunded since it was asked. */
export const REFUNDED_SINCE = "refunded_since";

/** The refund policy's findings about the amount asked, which other refunds since make stale. */
const AMOUNT_FINDINGS = new Set(["over_auto_limit", "already_refunded", "exceeds_order_total"]);

/**
 * A refund approval as the ledger says it now: when other refunds of the order (another line of this thread, another
 * decision) left less than the question was asked with, what is left replaces it and a finding says why — so the page
 * offers no approval of money that is gone, and an answer is checked against what is left. Any other question as is.
 */
async function currentRefundApproval(db: Queryable, payload: InterruptPayload): Promise<InterruptPayload> {
  if (payload.action !== "refund_approval") return payload;
  const total = payload.order.total.amountCents;
  const asked = payload.refundable?.amountCents ?? total;
  const left = Math.max(0, total - (await sumRefundsForOrder({ db, orderId: payload.order.id })));
  if (left >= asked) return payload;
  const currency = payload.order.total.currency;
  return {
    ...payload,
    refundable: { amountCents: left, currency },
    findings: [
      // What the policy said of the money when it asked (over a limit, refunded already, more than is left) is
      // about money that is gone: kept as what it said then, marked so, no longer a reason of its own.
      ...payload.findings
        .filter((f) => f.code !== REFUNDED_SINCE)
        .map((f) =>
          AMOUNT_FINDINGS.has(f.code)
            ? { ...f, severity: "info" as const, message: `When this was asked: ${f.message}` }
            : f,
        ),
      {
        code: REFUNDED_SINCE,
        severity: "block",
        message: `${formatMoney(asked - left, currency)} of this order was refunded since this was asked (on another line of this thread, or by another decision): ${left > 0 ? `only ${formatMoney(left, currency)} is left` : "nothing is left"} to refund.`,
      },
    ],
  };
}
