import "server-only";
import { AIMessage } from "@langchain/core/messages";
import { formatMoney } from "@/lib/contract/wire";
import { type ReplyFacts, replyPrompt } from "../prompts";
import { renderReplyBody, replySubject } from "../reply-templates";
import type { RefundStateValue } from "../state";
import { type NodeContext, type RefundNode, streamToMessage } from "./context";

/** What happened, as the reply writer needs it. */
export function replyFactsOf(state: RefundStateValue): ReplyFacts {
  const { order, decision } = state;
  const refund = state.refund?.status === "refused" ? null : state.refund;
  const refused = state.refund?.status === "refused" ? state.refund : null;
  const currency = order?.currency ?? "EUR";
  const money = (cents: number | null | undefined) => (cents == null ? null : formatMoney(cents, currency));
  let outcome: ReplyFacts["outcome"] = "question";
  let amountCents = refund?.amountCents;
  if (state.intent === "refund" && decision?.decision === "reject") outcome = "refund_rejected";
  else if (state.intent === "refund" && refund) {
    // A refund found under this decision's own key (a re-run) is this refund: never "already refunded".
    outcome = decision?.decision === "approve_partial" ? "refund_partial" : "refund_approved";
  } else if (state.intent === "refund" && refused) {
    // Other decisions' refunds left less than this one: what they paid, or what is left.
    const none = refused.refundableCents === 0;
    outcome = none ? "already_refunded" : "refund_limited";
    amountCents = none ? refused.refundedCents : refused.refundableCents;
  }
  return {
    outcome,
    customerName: order?.customerName ?? null,
    customerMessage: state.customerMessage,
    orderId: order?.id ?? state.orderRef,
    amount: money(amountCents),
    requested: money(state.requested),
    method: refund?.method ?? null,
    ...(refund?.byPerson ? { byPerson: true } : {}),
    // The internal note stays internal: only what the operator wrote to the customer goes into the reply.
    note: decision?.customerMessage ?? null,
  };
}

/**
 * write_reply: the model writes the customer reply, streamed token by token (LangGraph's "messages" mode carries the
 * chunks). The final message keeps the streamed id, so a client never sees it twice.
 */
export function writeReplyNode({ model }: NodeContext): RefundNode {
  return async (state, config) => {
    const facts = replyFactsOf(state);
    const response = await streamToMessage(model, replyPrompt(facts), config);
    // A model that answers nothing must not leave the customer an empty email.
    const body = response.text.trim() || renderReplyBody(facts);
    const message = new AIMessage({ id: response.id, content: body });
    return { messages: [message], reply: { subject: replySubject(facts), body } };
  };
}
