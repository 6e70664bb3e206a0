import { z } from "zod";
import { runBudgetAnswerFor } from "@/lib/contract/budget-contract";
import type { DecisionSummary } from "@/lib/contract/wire";
import {
  type AnswerOf,
  confirmEmailAnswer,
  goodwillVoucherAnswer,
  type InterruptAction,
  type InterruptPayload,
  inputTextAnswer,
  interruptPayload,
  type PayloadOf,
  refundApprovalAnswer,
  reviewChangeAnswer,
  selectOptionAnswer,
  waitTimerAnswer,
} from "./contract";
import { readStandardInterrupt, toolReviewAnswerSchema } from "./tool-review";

/** Result of reading an interrupt value: a typed payload, or why it is not one (render it in the fallback view). */
export type ParsedInterrupt =
  | { ok: true; payload: InterruptPayload }
  | { ok: false; error: string; raw: unknown };

/**
 * Read a raw interrupt value (from LangGraph, the API or an old record) into the contract. Legacy shapes are
 * normalized first: a one-element array (the agent-inbox convention) is unwrapped.
 */
export function parseInterruptPayload(raw: unknown): ParsedInterrupt {
  // The ecosystem's standard interrupts (LangChain's review middleware, agent-inbox) read as `tool_review`.
  const value = readStandardInterrupt(raw) ?? (Array.isArray(raw) && raw.length === 1 ? raw[0] : raw);
  const parsed = interruptPayload.safeParse(value);
  if (parsed.success) return { ok: true, payload: parsed.data };
  return { ok: false, error: z.prettifyError(parsed.error), raw };
}

/**
 * The schema an answer to `payload` must match, including constraints that depend on the payload itself (a partial
 * refund below the requested amount, an option that exists, the text pattern and length).
 */
export function answerSchemaFor<A extends InterruptAction>(payload: PayloadOf<A>): z.ZodType<AnswerOf[A]> {
  return answerSchema(payload as InterruptPayload) as unknown as z.ZodType<AnswerOf[A]>;
}

function answerSchema(payload: InterruptPayload): z.ZodType {
  switch (payload.action) {
    case "refund_approval": {
      // Never more money than is left to refund on the order (its total minus earlier refunds), whatever was asked.
      const left = refundableCents(payload);
      const leftText = `${(left / 100).toFixed(2)} ${payload.requested.currency}`;
      return refundApprovalAnswer
        .refine((a) => a.decision !== "approve_partial" || a.amountCents < payload.requested.amountCents, {
          message: "a partial refund must be less than the requested amount",
          path: ["amountCents"],
        })
        .refine((a) => a.decision !== "approve_partial" || a.amountCents <= left, {
          message:
            left < payload.order.total.amountCents
              ? `only ${leftText} of this order is left to refund`
              : "a refund cannot be more than the order total",
          path: ["amountCents"],
        })
        .refine((a) => a.decision !== "approve" || payload.requested.amountCents <= left, {
          message:
            left < payload.order.total.amountCents
              ? `the requested amount is more than the ${leftText} left to refund: approve a smaller amount instead`
              : "the requested amount is more than the order total: approve a smaller amount instead",
          path: ["decision"],
        });
    }
    case "select_option": {
      const ids = new Set(payload.options.map((o) => o.id));
      return selectOptionAnswer.refine((a) => ids.has(a.optionId), {
        message: `optionId must be one of: ${[...ids].join(", ")}`,
        path: ["optionId"],
      });
    }
    case "input_text": {
      let text = z.string().trim().min(payload.minLength).max(payload.maxLength);
      if (payload.pattern) {
        text = text.regex(
          new RegExp(`^(?:${payload.pattern})$`),
          payload.patternHint ?? "does not match the format",
        );
      }
      return inputTextAnswer.extend({ text });
    }
    case "confirm_email":
      return confirmEmailAnswer;
    case "review_change":
      return reviewChangeAnswer;
    case "goodwill_voucher":
      return goodwillVoucherAnswer;
    case "tool_review":
      return toolReviewAnswerSchema(payload);
    case "run_budget":
      return runBudgetAnswerFor(payload);
    case "wait_timer":
      return waitTimerAnswer;
  }
}

/** What is left to refund for an approval: the payload's refundable remainder, or (older payloads) the order total. */
export function refundableCents(payload: PayloadOf<"refund_approval">): number {
  return Math.min(
    payload.refundable?.amountCents ?? Number.POSITIVE_INFINITY,
    payload.order.total.amountCents,
  );
}

export type AnswerCheck<T = unknown> = { ok: true; answer: T } | { ok: false; error: string };

/** Validate an operator's answer against the payload it answers. */
export function validateAnswer(payload: InterruptPayload, answer: unknown): AnswerCheck {
  const parsed = answerSchema(payload).safeParse(answer);
  return parsed.success
    ? { ok: true, answer: parsed.data }
    : { ok: false, error: z.prettifyError(parsed.error) };
}

/**
 * Kinds whose answer's JSON Schema is the same for every question: what depends on the question there is a
 * refinement (an amount left to refund, an option that exists), which JSON Schema does not carry.
 */
const SAME_JSON_FOR_EVERY_QUESTION: ReadonlySet<InterruptAction> = new Set([
  "refund_approval",
  "select_option",
  "confirm_email",
  "review_change",
  "goodwill_voucher",
  "wait_timer",
]);
const sharedJson = new Map<InterruptAction, Readonly<Record<string, unknown>>>();

/**
 * JSON Schema of the answer, sent as AG-UI `Interrupt.responseSchema` so any client can build a form. Made once per
 * kind where it cannot differ between questions (frozen: it is shared), per question otherwise.
 */
export function answerJsonSchema(payload: InterruptPayload): Record<string, unknown> {
  const shared = SAME_JSON_FOR_EVERY_QUESTION.has(payload.action);
  const made = shared ? sharedJson.get(payload.action) : undefined;
  if (made) return made as Record<string, unknown>;
  const json = z.toJSONSchema(answerSchema(payload), { unrepresentable: "any" }) as Record<string, unknown>;
  if (shared) sharedJson.set(payload.action, deepFreeze(json));
  return json;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

export type { DecisionSummary };

/** Summarize an interrupt payload for the inbox (anything outside the contract summarizes to nulls). */
export function summarizePayload(raw: unknown): DecisionSummary {
  const parsed = parseInterruptPayload(raw);
  const none: DecisionSummary = {
    title: null,
    orderId: null,
    customerName: null,
    amountCents: null,
    currency: null,
  };
  if (!parsed.ok) return none;
  const p = parsed.payload;
  if (p.action === "refund_approval") {
    return {
      title: p.title,
      orderId: p.order.id,
      customerName: p.customer.name,
      amountCents: p.requested.amountCents,
      currency: p.requested.currency,
      findings: p.findings.slice(0, 12).map((f) => ({
        code: f.code.slice(0, 64),
        severity: f.severity,
        message: f.message.slice(0, 300),
      })),
    };
  }
  if (p.action === "review_change") return { ...none, title: p.title, customerName: p.customer.name };
  if (p.action === "tool_review") {
    // What the reviewed calls say of themselves: an order they are about, and money when it names its currency.
    const args = p.requests.map((r) => r.args);
    const orderId = args.map((a) => a.orderId).find((v): v is string => typeof v === "string") ?? null;
    // A call that names no currency (a credit in the order's money) still has its amount: the thread's context or
    // the agent says the currency (lib/runtime/runs/finalize.ts).
    const money = args.find((a) => Number.isInteger(a.amountCents) && (a.amountCents as number) >= 0);
    return {
      ...none,
      title: p.title,
      orderId,
      ...(money
        ? {
            amountCents: money.amountCents as number,
            currency: typeof money.currency === "string" ? money.currency : null,
          }
        : {}),
    };
  }
  if (p.action === "goodwill_voucher") {
    return {
      ...none,
      title: p.title,
      customerName: p.customer.name,
      amountCents: p.voucher.amountCents,
      currency: p.voucher.currency,
    };
  }
  return { ...none, title: p.title };
}
