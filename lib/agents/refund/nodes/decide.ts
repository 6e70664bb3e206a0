import "server-only";
import { askHuman, askHumanDecision, decisionRef } from "@/lib/agents/kit/ask-human";
import { formatMoney } from "@/lib/contract/wire";
import { recordSystemReceipt } from "@/lib/delivery/receipts";
import { sumRefundsForOrder } from "@/lib/shop/refunds";
import { AUTO_APPROVE_LIMIT_CENTS, evaluatePolicy } from "../policy";
import type { OrderSnapshot, RefundDecision, RefundMethod, RefundStateValue } from "../state";
import { type NodeContext, type RefundNode, threadIdOf } from "./context";

function requireOrder(state: RefundStateValue, node: string): OrderSnapshot {
  if (!state.order) throw new Error(`${node}: no order in the state`);
  return state.order;
}

/** check_policy: the deterministic rules; an auto-approval is the policy's decision. */
export function checkPolicyNode({ db }: NodeContext): RefundNode {
  return async (state, config) => {
    const order = requireOrder(state, "check_policy");
    const requestedCents = state.requested ?? order.amountCents;
    const refundedCents = await sumRefundsForOrder({ db, orderId: order.id });
    const policy = evaluatePolicy({
      order,
      requestedCents,
      refundedCents,
      now: new Date(),
      editedBy: state.editedBy,
    });
    // An automatic approval is this step's decision: the refund's key derives from this step, and its receipt (the
    // policy as the decider) authorizes exactly this amount to this order.
    const decision: RefundDecision | null = policy.autoApprove
      ? { decision: "approve", amountCents: requestedCents, decidedBy: "policy", ref: decisionRef(config) }
      : null;
    if (decision?.ref) {
      await recordSystemReceipt({
        db,
        threadId: threadIdOf(config),
        ref: decision.ref,
        action: "refund_auto_approval",
        shown: { order: order.id, requestedCents, refundedCents, findings: policy.findings },
        authorizes: [{ effect: "refund", orderId: order.id, amountCents: requestedCents }],
        by: { id: "system:policy", label: "policy" },
        policy: `refund:auto-approve up to ${AUTO_APPROVE_LIMIT_CENTS} cents`,
      });
    }
    return { requested: requestedCents, policy: { ...policy, refundedCents }, decision };
  };
}

/** human_review: an operator approves, rejects (with a note) or approves part of the requested amount. */
export function humanReviewNode(): RefundNode {
  return (state, config) => {
    const order = requireOrder(state, "human_review");
    const requestedCents = state.requested ?? order.amountCents;
    const refundedCents = state.policy?.refundedCents ?? 0;
    const { answer, ref } = askHumanDecision<"refund_approval">({
      action: "refund_approval",
      title: `Refund of ${formatMoney(requestedCents, order.currency)} for ${order.id}`,
      order: {
        id: order.id,
        placedAt: order.placedAt,
        paymentMethod: order.paymentMethod,
        status: order.status,
        total: { amountCents: order.amountCents, currency: order.currency },
        items: order.items.map(({ name, quantity, unitCents }) => ({ name, quantity, unitCents })),
      },
      customer: { name: order.customerName, email: order.customerEmail },
      requested: { amountCents: requestedCents, currency: order.currency },
      refundable: { amountCents: Math.max(0, order.amountCents - refundedCents), currency: order.currency },
      reason: state.reason,
      findings: state.policy?.findings ?? [],
    });
    // The runtime may say who is resuming; the answer itself carries no identity.
    const operator = config.configurable?.operator_id;
    const operatorId = typeof operator === "string" && operator !== "" ? { operatorId: operator } : {};
    const toCustomer = answer.customerMessage ? { customerMessage: answer.customerMessage } : {};
    const decision: RefundDecision =
      answer.decision === "reject"
        ? {
            decision: "reject",
            amountCents: 0,
            note: answer.note,
            ...toCustomer,
            decidedBy: "operator",
            ...operatorId,
            ref,
          }
        : {
            decision: answer.decision,
            amountCents: answer.decision === "approve_partial" ? answer.amountCents : requestedCents,
            ...(answer.note ? { note: answer.note } : {}),
            ...toCustomer,
            decidedBy: "operator",
            ...operatorId,
            ref,
          };
    return { decision };
  };
}

/** Payment methods a refund cannot simply be reversed to without asking how the customer wants it. */
const ASK_FOR_METHOD = new Set(["bank_transfer", "gift_card"]);

const PAID_BY: Record<string, string> = { bank_transfer: "bank transfer", gift_card: "gift card" };

/** choose_method: original payment, unless the order was paid by bank transfer or gift card — then an operator picks. */
export function chooseMethodNode(): RefundNode {
  return (state) => {
    const order = requireOrder(state, "choose_method");
    if (!ASK_FOR_METHOD.has(order.paymentMethod)) return { refundMethod: "original_payment" };
    const amount = formatMoney(state.decision?.amountCents ?? order.amountCents, order.currency);
    const answer = askHuman<"select_option">({
      action: "select_option",
      title: `How should ${order.customerName} get ${amount} back?`,
      question: `${order.id} was paid by ${PAID_BY[order.paymentMethod]}. Refund to the original payment method or as store credit?`,
      options: [
        {
          id: "original_payment",
          label: "Original payment method",
          description:
            order.paymentMethod === "gift_card"
              ? "The amount is loaded back onto the gift card."
              : "A bank transfer back to the customer's account (3–5 business days).",
        },
        {
          id: "store_credit",
          label: "Store credit",
          description: "Added to the customer's account at once, usable on the next order.",
        },
      ],
      defaultOptionId: "original_payment",
    });
    return { refundMethod: answer.optionId as RefundMethod };
  };
}
