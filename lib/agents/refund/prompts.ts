import "server-only";
import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { z } from "zod";
import { type Classification, classifyByRules, normalizeOrderRef } from "./classify-rules";
import type { RefundMethod } from "./state";

/*
 * Prompts are shared by the real model and the offline one: the first line of each system prompt names the task, and
 * the offline model answers by that task from the same input a real model reads.
 */

/** Task names on the `TASK:` line of the system prompts. */
export const CLASSIFY_TASK = "classify_customer_message";
export const REPLY_TASK = "write_customer_reply";

/** The task a prompt asks for: the `TASK:` line of its system message. */
export function readTask(messages: BaseMessage[]): string | null {
  const system = messages.find((m) => m.getType() === "system");
  return system?.text.match(/^TASK: (\w+)/m)?.[1] ?? null;
}

const CLASSIFY_INSTRUCTIONS = `TASK: ${CLASSIFY_TASK}
You triage messages sent to an online shop's customer service.
Answer with one JSON object and nothing else, with exactly these keys:
- "intent": "refund" if the customer asks for their money back (fully or partly), otherwise "other"
- "reason": why, in a few words (e.g. "item arrived damaged")
- "orderRef": the order number in the form ORD-1234, or null if the message has none
- "requestedAmount": the amount the customer asks for as a number in the order currency (e.g. 25.5), or null`;

/** Messages asking a model to classify `customerMessage` as JSON. */
export function classifyPrompt(customerMessage: string): BaseMessage[] {
  return [new SystemMessage(CLASSIFY_INSTRUCTIONS), new HumanMessage(customerMessage)];
}

const modelClassification = z.object({
  intent: z.enum(["refund", "other"]),
  reason: z.string().trim().min(1).max(500),
  orderRef: z.string().nullish(),
  requestedAmount: z.union([z.number(), z.string()]).nullish(),
});

/**
 * Read a model's classification. Models wrap JSON in prose or code fences and get fields wrong, so anything that does
 * not parse falls back to the rules, and an order number the model missed is still taken from the message.
 */
export function parseClassification(text: string, customerMessage: string): Classification {
  const rules = classifyByRules(customerMessage);
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return rules;
  let json: unknown;
  try {
    json = JSON.parse(text.slice(start, end + 1));
  } catch {
    return rules;
  }
  const parsed = modelClassification.safeParse(json);
  if (!parsed.success) return rules;
  const amount = Number(parsed.data.requestedAmount);
  const requestedCents =
    parsed.data.requestedAmount != null && Number.isFinite(amount) && amount > 0
      ? Math.round(amount * 100)
      : null;
  return {
    intent: parsed.data.intent,
    reason: parsed.data.reason,
    orderRef: normalizeOrderRef(parsed.data.orderRef) ?? rules.orderRef,
    requestedCents,
  };
}

/** What the reply writer knows. Amounts are already formatted, so no model does currency arithmetic. */
export interface ReplyFacts {
  outcome:
    | "refund_approved"
    | "refund_partial"
    | "refund_rejected"
    | "already_refunded"
    | "refund_limited"
    | "question";
  customerName: string | null;
  customerMessage: string;
  orderId: string | null;
  /** The refunded amount, e.g. "€25.00"; for already_refunded what earlier refunds paid, for refund_limited what is
   * left to refund. */
  amount: string | null;
  requested: string | null;
  method: RefundMethod | null;
  /** A member of the team pays it by hand (the payment provider cannot): never say it is being processed. */
  byPerson?: boolean;
  /** What the operator wrote to the customer (never their internal note), or null. */
  note: string | null;
}

const REPLY_INSTRUCTIONS = `TASK: ${REPLY_TASK}
You write the email reply to a customer of an online shop, on behalf of its customer service team.
Use only the facts given. Be warm, clear and brief (at most 120 words). Write the body only: no subject line,
no placeholders. Sign as "Customer Service".
Outcomes: refund_approved (full refund), refund_partial (part of the requested amount), refund_rejected (say the
refund request was rejected and why, from the note), already_refunded (earlier refunds already paid the whole
order back: nothing more can be refunded), refund_limited (earlier refunds leave only the amount to refund: the team
will follow up),
question (no refund involved: acknowledge the message and say the team will follow up).
Method store_credit means the amount is added as store credit instead of going back to the original payment.
byPerson true means a member of the team pays it by hand: say so, and never that it was added or is being processed.`;

/** Messages asking a model to write the customer reply from `facts`. */
export function replyPrompt(facts: ReplyFacts): BaseMessage[] {
  return [new SystemMessage(REPLY_INSTRUCTIONS), new HumanMessage(`<facts>${JSON.stringify(facts)}</facts>`)];
}

/** The facts inside a reply prompt (the offline model reads them back). */
export function readReplyFacts(messages: BaseMessage[]): ReplyFacts | null {
  for (const message of messages) {
    const match = message.text.match(/<facts>([\s\S]*)<\/facts>/);
    if (!match) continue;
    try {
      return JSON.parse(match[1]!) as ReplyFacts;
    } catch {
      return null;
    }
  }
  return null;
}
