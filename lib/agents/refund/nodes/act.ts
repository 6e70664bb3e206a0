import "server-only";
import { askHuman, askHumanDecision, decisionRef } from "@/lib/agents/kit/ask-human";
import { queueEmail } from "@/lib/db/queries/outbox";
import { paidWithoutPerson } from "@/lib/delivery/kinds";
import { recordRefund } from "@/lib/shop/refunds";
import type { RefundMethod } from "../state";
import { type NodeContext, type RefundNode, threadIdOf } from "./context";

/**
 * execute_refund: record the approved refund and its payment intent, keyed by the decision that approved it (see
 * `recordRefund`). A resumed or recovered run that gets here again finds its own refund — the same one, not an
 * earlier refund of the order; a refund that would take the order above its total is refused. Nothing is paid here:
 * the dispatcher pays the intent afterwards, so the state says `queued`.
 */
export function executeRefundNode({ db, refundNodeDelayMs = 0 }: NodeContext): RefundNode {
  return async (state, config) => {
    const { order, decision } = state;
    if (!order || !decision || decision.decision === "reject") return { refund: null };
    // Defence in depth: the answer was validated against the refundable amount, and the ledger checks it again.
    const amountCents = Math.min(decision.amountCents, order.amountCents);
    const recorded = await recordRefund({
      db,
      // Checkpoints from before decisions carried a reference: this step's own task stands in for it.
      decisionRef: decision.ref ?? decisionRef(config),
      orderId: order.id,
      threadId: threadIdOf(config),
      amountCents,
      currency: order.currency,
      method: state.refundMethod ?? "original_payment",
    });
    if (refundNodeDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, refundNodeDelayMs));
    if (!recorded.ok) {
      if (recorded.reason === "duplicate") throw new Error("execute_refund: a refund has no purpose here");
      const { refundedCents, refundableCents } = recorded;
      return {
        refund: {
          status: "refused",
          orderId: order.id,
          amountCents,
          currency: order.currency,
          refundedCents,
          refundableCents,
        },
      };
    }
    const { refund, effect } = recorded;
    const method = refund.method as RefundMethod;
    const automatic = await paidWithoutPerson({ db, refund: { orderId: refund.orderId, method } });
    return {
      refund: {
        id: refund.id,
        orderId: refund.orderId,
        amountCents: refund.amountCents,
        currency: refund.currency,
        method,
        approvedBy: refund.approvedBy,
        createdAt: refund.createdAt.toISOString(),
        effectId: effect.id,
        status: "queued",
        ...(automatic ? {} : { byPerson: true }),
      },
    };
  };
}

/**
 * confirm_email: an operator sends the drafted reply, sends an edited version, or sends nothing. The decision's
 * reference is kept with the reply: that approved revision is what send_email queues, once.
 */
export function confirmEmailNode(): RefundNode {
  return (state) => {
    const { order, reply } = state;
    if (!reply) throw new Error("confirm_email: no reply in the state");
    if (!order) {
      // No order whose customer the agent may write to: a person replies from the ticket system; the ticket stays
      // in the inbox until they say so.
      askHuman<"select_option">({
        action: "select_option",
        title: "Reply to the customer",
        question:
          "The agent has no address it may write to for this ticket, so its draft (in the conversation) was not sent. Reply to the customer yourself, then mark it done here.",
        options: [
          { id: "replied", label: "I replied to the customer" },
          { id: "no_reply_needed", label: "No reply is needed" },
        ],
      });
      return { email: { status: "not_sent" } };
    }
    const { answer, ref } = askHumanDecision<"confirm_email">({
      action: "confirm_email",
      title: `Reply to ${order.customerName}`,
      to: order.customerEmail,
      subject: reply.subject,
      body: reply.body,
    });
    switch (answer.choice) {
      case "send":
        return { reply: { ...reply, approvedBy: ref } };
      case "send_edited":
        // The drafted reply stays in `messages`; `reply` becomes what is actually sent.
        return { reply: { subject: answer.subject, body: answer.body, approvedBy: ref } };
      case "dont_send":
        return { email: { status: "not_sent" } };
    }
  };
}

/**
 * send_email: queue the approved reply revision for delivery, once per approving decision (`queueEmail`): a re-run
 * finds its own email; a second reply on a reopened ticket was approved by another decision, so it is a new email.
 */
export function sendEmailNode({ db }: NodeContext): RefundNode {
  return async (state, config) => {
    const { order, reply } = state;
    if (!order || !reply) throw new Error("send_email: no recipient or no reply in the state");
    const { email, effect } = await queueEmail({
      db,
      decisionRef: reply.approvedBy ?? decisionRef(config),
      threadId: threadIdOf(config),
      to: order.customerEmail,
      subject: reply.subject,
      body: reply.body,
    });
    return { email: { status: "queued", outboxId: email.id, effectId: effect.id } };
  };
}
