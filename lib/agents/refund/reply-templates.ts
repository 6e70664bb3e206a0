import "server-only";
import type { ReplyFacts } from "./prompts";

const SIGNATURE = "Kind regards,\nCustomer Service";

/** How the money goes back, as far as it is known when the reply is written (the payment is not made yet). */
function methodSentence(facts: ReplyFacts): string {
  if (facts.byPerson)
    return facts.method === "store_credit"
      ? `A member of our team will add the amount of ${facts.amount} to your account as store credit by hand and let you know when it is there.`
      : `A member of our team will send the amount of ${facts.amount} back to your original payment method by hand and let you know when it is on its way.`;
  return facts.method === "store_credit"
    ? `The amount of ${facts.amount} will be added to your account as store credit, ready for your next order.`
    : `The amount of ${facts.amount} goes back to your original payment method and should arrive within 5 to 10 business days.`;
}

/** The offline model's reply body for `facts`: fixed templates, one per outcome. */
export function renderReplyBody(facts: ReplyFacts): string {
  const greeting = `Hello ${facts.customerName ?? "there"},`;
  const order = facts.orderId ?? "your order";
  let paragraphs: string[];
  switch (facts.outcome) {
    case "refund_approved":
      paragraphs = [
        `Thank you for getting in touch about ${order}. We have approved your refund of ${facts.amount}.`,
        methodSentence(facts),
      ];
      break;
    case "refund_partial":
      paragraphs = [
        `Thank you for getting in touch about ${order}. We have reviewed your request for ${facts.requested} and approved a partial refund of ${facts.amount}.`,
        methodSentence(facts),
        ...(facts.note ? [`A note from our team: ${facts.note}`] : []),
      ];
      break;
    case "refund_rejected":
      paragraphs = [
        `Thank you for getting in touch about ${order}. We have reviewed your request carefully, and unfortunately your refund request has been rejected.`,
        ...(facts.note ? [`Reason: ${facts.note}`] : []),
        "If you have any further information, just reply to this email and we will take another look.",
      ];
      break;
    case "already_refunded":
      // Only for refunds of other, earlier requests: a re-run of this request finds its own refund (refund_approved).
      paragraphs = [
        `Thank you for getting in touch about ${order}. Earlier refunds of ${facts.amount} already paid this order back in full, so there is nothing more we can refund.`,
        "If something else went wrong with your order, just reply to this email and we will help.",
      ];
      break;
    case "refund_limited":
      paragraphs = [
        `Thank you for getting in touch about ${order}. Earlier refunds leave ${facts.amount} of this order that can still be refunded, so we could not refund the amount we approved.`,
        "A member of our team will get back to you about the rest.",
      ];
      break;
    case "question":
      paragraphs = [
        "Thank you for your message. We have received it and a member of our team will get back to you shortly.",
        ...(facts.orderId ? [`We have noted that your question is about ${facts.orderId}.`] : []),
      ];
      break;
  }
  return [greeting, ...paragraphs, SIGNATURE].join("\n\n");
}

/** The email subject for `facts` (not written by a model: it must never be empty or odd). */
export function replySubject(facts: ReplyFacts): string {
  const about = facts.orderId ? ` (${facts.orderId})` : "";
  switch (facts.outcome) {
    case "refund_approved":
    case "refund_partial":
    case "already_refunded":
    case "refund_limited":
      return `Your refund${about}`;
    case "refund_rejected":
      return `Your refund request${about}`;
    case "question":
      return `Re: your message${about}`;
  }
}
