import type { z } from "zod";
import { runBudgetAnswer } from "@/lib/contract/budget-contract";
import { humanize } from "@/lib/contract/humanize";
import { type Authorization, formatMoney } from "@/lib/contract/wire";
import {
  type AnswerOf,
  confirmEmailAnswer,
  goodwillVoucherAnswer,
  type InterruptAction,
  inputTextAnswer,
  type PayloadOf,
  refundApprovalAnswer,
  reviewChangeAnswer,
  selectOptionAnswer,
  waitTimerAnswer,
} from "./contract";
import { fieldWords, isMoneyArg, reviewDecisions, sentBackToModel, toolReviewAnswer } from "./tool-review";

/*
 * Everything the console says and does about a kind of question, in one table (isomorphic): what people call it,
 * the shape of its answer, which answer acts on the world, what "approve" and "reject" mean in bulk, and how an
 * answer reads in the ledger. The label list, the bulk answers, the deadline settings, the pre-click policy check and
 * the ledger summaries are all read from here; the mapped type makes a question kind without an entry a compile
 * error, and `kinds.test.ts` checks every entry says something for every answer the registered agents can give.
 */

export type BulkVerb = "approve" | "reject";

/**
 * "Answer differently": what the form opens with when a branch asks again a question the other line answered —
 * the other way (`verb`: the answer that goes ahead, or the one that refuses), and for a choice the option not
 * taken, for tool calls the way to take each call. A starting point, never sent as it is: the operator still adds
 * what the answer needs (a reason to reject) and gives it.
 */
export interface OtherWay {
  verb: BulkVerb;
  /** A choice: the first option the other line did not take. */
  optionId?: string;
  /** Reviewed tool calls: per call, in order. */
  calls?: BulkVerb[];
}

export interface QuestionKind<A extends InterruptAction> {
  /** What the operator calls it ("Refund approval"). */
  label: string;
  /** A question of this kind, as an agent raises it: what the registry test asks every entry about. */
  example: PayloadOf<A>;
  /**
   * The answer's shape without what depends on the question (a deadline's expiry answer is checked against it when
   * saved; the full contract, `validateAnswer`, when it is applied).
   */
  answerShape: z.ZodType;
  /** The answer that acts on the world (approve, send, grant), or null when none does: the pre-click policy check. */
  actingAnswer(payload: PayloadOf<A>): AnswerOf[A] | null;
  /**
   * What a bulk "approve" / "reject" answers, or null when each question needs an answer of its own (a choice, a
   * text): such questions are decided one by one. Bulk answers are validated by the contract like any other.
   */
  bulk: ((verb: BulkVerb, note: string | undefined) => unknown) | null;
  /** The other way to answer, given how the other line answered (`OtherWay`); null when there is none (free text). */
  otherWay(payload: PayloadOf<A>, answer: Record<string, unknown>): OtherWay | null;
  /** The answer as one line for people ("Approved €200.00 (a smaller amount)"), or null to say "see the history". */
  summarize(answer: Record<string, unknown>, currency: string, quote: (v: unknown) => string): string | null;
  /**
   * The effects an answer authorizes (a refund of this amount to this order, this account's field to this value, a
   * voucher), as shown in the question: written into the decision's receipt, spent by the effect that carries it
   * out. A kind whose effects are the agent's own (reviewed tool calls) declares none; the agent adds them.
   */
  authorizes(payload: PayloadOf<A>, answer: Record<string, unknown>): Authorization[];
}

const none = (): Authorization[] => [];

/** A kind whose answers go ahead or refuse: the other way is the other one of the two. */
const flip =
  (field: string, ahead: readonly string[]) =>
  (_payload: unknown, answer: Record<string, unknown>): OtherWay => ({
    verb: ahead.includes(String(answer[field])) ? "reject" : "approve",
  });

const approveOrReject = (verb: BulkVerb, note: string | undefined) =>
  verb === "approve" ? { decision: "approve", ...(note ? { note } : {}) } : { decision: "reject", note };

export const QUESTION_KINDS: { [A in InterruptAction]: QuestionKind<A> } = {
  refund_approval: {
    label: "Refund approval",
    example: {
      action: "refund_approval",
      title: "Refund for ORD-1",
      order: {
        id: "ORD-1",
        placedAt: "2026-01-01T00:00:00.000Z",
        paymentMethod: "card",
        status: "delivered",
        total: { amountCents: 10_000, currency: "EUR" },
        items: [{ name: "Mug", quantity: 1, unitCents: 10_000 }],
      },
      customer: { name: "Ada", email: "ada@example.com" },
      requested: { amountCents: 10_000, currency: "EUR" },
      reason: "damaged",
      findings: [],
    },
    answerShape: refundApprovalAnswer,
    actingAnswer: () => ({ decision: "approve" }),
    bulk: approveOrReject,
    otherWay: flip("decision", ["approve", "approve_partial"]),
    summarize(a, currency, quote) {
      if (a.decision === "approve") return a.note ? `Approved (note: ${quote(a.note)})` : "Approved";
      if (a.decision === "reject") return `Rejected: ${quote(a.note)}`;
      if (a.decision === "approve_partial" && typeof a.amountCents === "number") {
        return `Approved ${formatMoney(a.amountCents, currency)} (a smaller amount)`;
      }
      return null;
    },
    authorizes: (payload, a) =>
      a.decision === "approve"
        ? [{ effect: "refund", orderId: payload.order.id, amountCents: payload.requested.amountCents }]
        : a.decision === "approve_partial" && typeof a.amountCents === "number"
          ? [{ effect: "refund", orderId: payload.order.id, amountCents: a.amountCents }]
          : [],
  },
  select_option: {
    label: "Choose an option",
    authorizes: none,
    example: {
      action: "select_option",
      title: "Refund method",
      question: "How?",
      options: [
        { id: "original_payment", label: "Original payment" },
        { id: "store_credit", label: "Store credit" },
      ],
    },
    answerShape: selectOptionAnswer,
    actingAnswer: () => null,
    bulk: null,
    otherWay: (payload, answer) => {
      const other = payload.options.find((o) => o.id !== answer.optionId);
      return other ? { verb: "approve", optionId: other.id } : null;
    },
    summarize: (a) => (typeof a.optionId === "string" ? `Chose ${humanize(a.optionId)}` : null),
  },
  input_text: {
    label: "Missing information",
    authorizes: none,
    example: {
      action: "input_text",
      title: "Order number",
      question: "Which order?",
      minLength: 1,
      maxLength: 50,
    },
    answerShape: inputTextAnswer,
    actingAnswer: () => null,
    bulk: null,
    otherWay: () => null,
    summarize: (a, _c, quote) => (typeof a.text === "string" ? `Answered ${quote(a.text)}` : null),
  },
  confirm_email: {
    label: "Confirm email",
    authorizes: none,
    example: {
      action: "confirm_email",
      title: "Reply",
      to: "ada@example.com",
      subject: "Your refund",
      body: "Hello",
    },
    answerShape: confirmEmailAnswer,
    actingAnswer: () => ({ choice: "send" }),
    bulk: (verb, note) =>
      verb === "approve" ? { choice: "send" } : { choice: "dont_send", ...(note ? { note } : {}) },
    otherWay: flip("choice", ["send", "send_edited"]),
    summarize(a, _c, quote) {
      if (a.choice === "send") return "Sent the drafted email";
      if (a.choice === "send_edited") return `Sent an edited email (${quote(a.subject)})`;
      if (a.choice === "dont_send") return "Did not send the email";
      return null;
    },
  },
  review_change: {
    label: "Account change review",
    example: {
      action: "review_change",
      title: "Payout change",
      review: "data",
      customer: { name: "Ada", email: "ada@example.com" },
      change: { field: "payout", from: null, to: "DE89 3704 0044 0532 0130 00" },
      checks: ["The account is the customer's"],
      requiredRole: "operator",
    },
    answerShape: reviewChangeAnswer,
    actingAnswer: () => ({ decision: "approve" }),
    bulk: approveOrReject,
    otherWay: flip("decision", ["approve"]),
    summarize(a, _c, quote) {
      if (a.decision === "approve") return a.note ? `Approved (note: ${quote(a.note)})` : "Approved";
      if (a.decision === "reject") return `Rejected: ${quote(a.note)}`;
      return null;
    },
    authorizes: (payload, a) =>
      a.decision === "approve"
        ? [
            {
              effect: "account_change",
              accountEmail: payload.customer.email,
              field: payload.change.field,
              to: payload.change.to,
            },
          ]
        : [],
  },
  goodwill_voucher: {
    label: "Goodwill voucher",
    example: {
      action: "goodwill_voucher",
      title: "Voucher",
      customer: { name: "Ada", email: "ada@example.com" },
      voucher: { amountCents: 500, currency: "EUR" },
      complaint: "Late",
    },
    answerShape: goodwillVoucherAnswer,
    actingAnswer: () => ({ decision: "grant" }),
    bulk: (verb, note) => (verb === "approve" ? { decision: "grant" } : { decision: "decline", note }),
    otherWay: flip("decision", ["grant"]),
    summarize(a, _c, quote) {
      if (a.decision === "grant") return "Granted the voucher";
      if (a.decision === "decline") return `Declined: ${quote(a.note)}`;
      return null;
    },
    authorizes: (payload, a) =>
      a.decision === "grant"
        ? [
            {
              effect: "voucher",
              amountCents: payload.voucher.amountCents,
              currency: payload.voucher.currency,
            },
          ]
        : [],
  },
  tool_review: {
    label: "Tool call review",
    // Reviewed calls' effects are the agent's own: it declares them (AgentDefinition.authorizes).
    authorizes: none,
    example: {
      action: "tool_review",
      title: "Review tool call: issue_store_credit",
      format: "langchain",
      requests: [
        {
          name: "issue_store_credit",
          args: { orderId: "ORD-1", amountCents: 500, reason: "Sorry" },
          allowed: ["approve", "edit", "reject"],
        },
      ],
    },
    answerShape: toolReviewAnswer,
    // Approving every reviewed call: the answer whose policy (roles, four-eyes, limits per tool) is asked before the click.
    actingAnswer: (payload) =>
      payload.format === "langchain"
        ? { decisions: payload.requests.map(() => ({ type: "approve" as const })) }
        : payload.requests.map(() => ({ type: "accept" as const, args: null })),
    // Each call may need its own decision (and the count differs per question): decided one by one.
    bulk: null,
    otherWay(_payload, answer) {
      const calls = reviewDecisions(answer).map(
        (d): BulkVerb => (d.type === "approve" || d.type === "edit" ? "reject" : "approve"),
      );
      return calls.length > 0 ? { verb: calls.includes("approve") ? "approve" : "reject", calls } : null;
    },
    summarize(a, c, quote) {
      const decisions = reviewDecisions(a);
      if (decisions.length === 0) return null;
      // LangChain runs none of a batch with a rejection: an approval in it is said as not run.
      const notRun = sentBackToModel(a) ? " (not run: the batch went back to the agent)" : "";
      return decisions
        .map((d) => {
          if (d.type === "approve") return `Approved${notRun}`;
          if (d.type === "edit") return `Approved with edits: ${argsInWords(d.args, c, quote)}${notRun}`;
          if (d.type === "respond") return `Answered the agent: ${quote(d.message)}`;
          if (d.type === "ignore") return d.note ? `Ignored: ${quote(d.note)}` : "Ignored";
          return d.message ? `Rejected: ${quote(d.message)}` : "Rejected";
        })
        .join("; ");
    },
  },
  wait_timer: {
    label: "Timer",
    authorizes: none,
    example: {
      action: "wait_timer",
      title: "Cooling-off before the new payout account takes effect",
      durationMs: 86_400_000,
      reason: "A new payout account takes effect a day after both reviews approved it.",
      onCancel: "The change is not made.",
    },
    answerShape: waitTimerAnswer,
    // Nobody has to answer: the timer fires by itself. Firing it (early, when a person does) lets what waits happen:
    // the agent's policy says who may, before the click too; the timer itself fires as a system the agent allows.
    actingAnswer: () => ({ outcome: "fired" }),
    bulk: null,
    otherWay: flip("outcome", ["fired"]),
    summarize(a, _c, quote) {
      if (a.outcome === "fired") return a.note ? `Fired (note: ${quote(a.note)})` : "Fired";
      if (a.outcome === "cancelled") return `Cancelled the wait: ${quote(a.note)}`;
      return null;
    },
  },
  run_budget: {
    label: "Spending limit",
    authorizes: none,
    example: {
      action: "run_budget",
      title: "The run reached its limit of 10,000 tokens per run",
      limit: "run_tokens",
      budget: 10_000,
      used: 10_250,
      spent: { runTokens: 10_250, threadTokens: 12_000 },
    },
    answerShape: runBudgetAnswer,
    // Raising a limit lets the agent spend more: the answer whose policy is asked before the click.
    actingAnswer: (payload) => ({ decision: "raise", to: Math.max(payload.budget, payload.used) * 2 }),
    // The new limit is a number someone chooses: decided one by one.
    bulk: null,
    otherWay: flip("decision", ["raise"]),
    summarize(a, _c, quote) {
      if (a.decision === "raise" && typeof a.to === "number")
        return `Raised the limit to ${a.to.toLocaleString("en")}`;
      if (a.decision === "stop") return `Stopped the run: ${quote(a.note)}`;
      return null;
    },
  },
};

/** The kind of an action, or undefined for one outside the contract. */
export function questionKind(action: string): QuestionKind<InterruptAction> | undefined {
  return Object.hasOwn(QUESTION_KINDS, action)
    ? (QUESTION_KINDS[action as InterruptAction] as unknown as QuestionKind<InterruptAction>)
    : undefined;
}

/**
 * Edited arguments as the decision history says them: each by its name in words, an amount in minor units as money
 * ("amount €15.00"), text quoted, anything else as written — never the arguments' JSON.
 */
function argsInWords(
  args: Record<string, unknown>,
  currency: string | undefined,
  quote: (v: unknown) => string,
) {
  const words = Object.entries(args).map(([name, value]) => {
    if (isMoneyArg(name) && typeof value === "number" && Number.isInteger(value))
      return `${fieldWords(name.replace(/Cents$/, "")) || "amount"} ${formatMoney(value, currency ?? "EUR")}`;
    if (typeof value === "string") return `${fieldWords(name)} ${quote(value)}`;
    return `${fieldWords(name)} ${JSON.stringify(value)}`;
  });
  return words.length > 0 ? words.join(", ") : "no arguments";
}
