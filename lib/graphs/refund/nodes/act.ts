import "server-only";
import { queueEmail } from "@/lib/db/queries/outbox";
import { recordRefund } from "@/lib/db/queries/refunds";
import { askHuman } from "@/lib/graphs/ask-human";
import type { RefundMethod } from "../state";
import { type NodeContext, type RefundNode, threadIdOf } from "./context";

/**
 * execute_refund: record the approved refund. Idempotent by the order (see `recordRefund`): a resumed, recovered or
 * forked run that gets here again finds the recorded refund (`duplicate: true`) and pays nothing twice.
 */
export function executeRefundNode({ db, refundNodeDelayMs = 0 }: NodeContext): RefundNode {
  return async (state, config) => {
    const { order, decision } = state;
    if (!order || !decision || decision.decision === "reject") return { refund: null };
    const { refund, duplicate } = await recordRefund({
      db,
      orderId: order.id,
      threadId: threadIdOf(config),
      // Defence in depth: the answer was validated against the order total, and the refund is capped by it again.
      amountCents: Math.min(decision.amountCents, order.amountCents),
      currency: order.currency,
      method: state.refundMethod ?? "original_payment",
      approvedBy: decision.decidedBy === "policy" ? "policy" : (decision.operatorId ?? "operator"),
    });
    if (refundNodeDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, refundNodeDelayMs));
    return {
      refund: {
        id: refund.id,
        orderId: refund.orderId,
        amountCents: refund.amountCents,
        currency: refund.currency,
        method: refund.method as RefundMethod,
        approvedBy: refund.approvedBy,
        createdAt: refund.createdAt.toISOString(),
        duplicate,
      },
    };
  };
}

/** confirm_email: an operator sends the drafted reply, sends an edited version, or sends nothing. */
export function confirmEmailNode(): RefundNode {
  return (state) => {
    const { order, reply } = state;
    if (!order || !reply) throw new Error("confirm_email: no recipient or no reply in the state");
    const answer = askHuman<"confirm_email">({
      action: "confirm_email",
      title: `Reply to ${order.customerName}`,
      to: order.customerEmail,
      subject: reply.subject,
      body: reply.body,
    });
    switch (answer.choice) {
      case "send":
        return {};
      case "send_edited":
        // The drafted reply stays in `messages`; `reply` becomes what is actually sent.
        return { reply: { subject: answer.subject, body: answer.body } };
      case "dont_send":
        return { email: { status: "not_sent" } };
    }
  };
}

/** send_email: queue the reply in the outbox, once per thread (`queueEmail` is idempotent by the thread). */
export function sendEmailNode({ db }: NodeContext): RefundNode {
  return async (state, config) => {
    const { order, reply } = state;
    if (!order || !reply) throw new Error("send_email: no recipient or no reply in the state");
    const { email } = await queueEmail({
      db,
      threadId: threadIdOf(config),
      to: order.customerEmail,
      subject: reply.subject,
      body: reply.body,
    });
    return { email: { status: "sent", outboxId: email.id } };
  };
}
