import { z } from "zod";
import {
  type RunBudgetAnswer,
  type RunBudgetPayload,
  runBudgetPayload,
} from "@/lib/contract/budget-contract";
import { type ToolReviewAnswer, type ToolReviewPayload, toolReviewPayload } from "./tool-review";

/*
 * The one typed contract for interrupt payloads, shared by the server (graphs raise them, the run endpoint validates
 * answers) and the browser (the action → component registry renders them). Isomorphic: imports nothing server-side.
 */

/** Money in minor units (cents), always with its currency. */
export const money = z.object({
  amountCents: z.number().int().nonnegative(),
  currency: z.string().length(3),
});

/** A policy finding shown to the operator next to a refund request. */
export const policyFinding = z.object({
  /** Stable code, e.g. `over_auto_limit`, `late_request`, `flagged_order`. */
  code: z.string(),
  /** `block` findings are the reason a human must decide. */
  severity: z.enum(["info", "warning", "block"]),
  message: z.string(),
});

// ── refund_approval ────────────────────────────────────────────────────────────────────────────────────────────────

/** Approve, reject or partly approve a refund the policy did not approve by itself. */
export const refundApprovalPayload = z.object({
  action: z.literal("refund_approval"),
  /** Headline for the operator. */
  title: z.string(),
  order: z.object({
    id: z.string(),
    placedAt: z.string(),
    paymentMethod: z.string(),
    status: z.string(),
    total: money,
    items: z.array(z.object({ name: z.string(), quantity: z.number().int(), unitCents: z.number().int() })),
  }),
  customer: z.object({ name: z.string(), email: z.string() }),
  /** Amount the customer asked for. */
  requested: money,
  /**
   * What is left to refund on the order: its total minus the refunds other decisions already made (partial refunds
   * add up to at most the total). No approval may exceed it. Absent in payloads raised before it existed (then the
   * order total is the limit).
   */
  refundable: money.optional(),
  /** The customer's reason, as classified from their message. */
  reason: z.string(),
  findings: z.array(policyFinding),
});

/**
 * The operator's answer to a refund approval. A partial amount must be below the requested amount, and no approval
 * may exceed the refundable remainder. Answers are
 * strict everywhere: an unknown field is refused, never stored in the ledger.
 */
/**
 * What the operator writes to the customer, put in the reply email. Separate from `note`, which is internal: it is
 * kept with the decision (ledger, audit, history) and never sent.
 */
const customerMessage = z
  .string()
  .trim()
  .max(1000, "the message to the customer is longer than 1,000 characters");

export const refundApprovalAnswer = z.discriminatedUnion("decision", [
  z.strictObject({
    decision: z.literal("approve"),
    note: z.string().max(2000).optional(),
    customerMessage: customerMessage.optional(),
  }),
  z.strictObject({
    decision: z.literal("reject"),
    note: z.string().trim().min(1, "say why the refund is rejected").max(2000),
    customerMessage: customerMessage.optional(),
  }),
  z.strictObject({
    decision: z.literal("approve_partial"),
    amountCents: z.number().int().positive(),
    note: z.string().max(2000).optional(),
    customerMessage: customerMessage.optional(),
  }),
]);

// ── select_option ──────────────────────────────────────────────────────────────────────────────────────────────────

/** Pick one of a few options (e.g. refund to the original payment method or as store credit). */
export const selectOptionPayload = z.object({
  action: z.literal("select_option"),
  title: z.string(),
  question: z.string(),
  options: z
    .array(z.object({ id: z.string().min(1), label: z.string(), description: z.string().optional() }))
    .min(2),
  defaultOptionId: z.string().optional(),
});

export const selectOptionAnswer = z.strictObject({ optionId: z.string().min(1).max(200) });

// ── input_text ─────────────────────────────────────────────────────────────────────────────────────────────────────

/** Ask the operator for information the agent is missing (e.g. the order number). */
export const inputTextPayload = z.object({
  action: z.literal("input_text"),
  title: z.string(),
  question: z.string(),
  /** Context for the operator, e.g. the customer's message. */
  context: z.string().optional(),
  placeholder: z.string().optional(),
  minLength: z.number().int().nonnegative().default(1),
  maxLength: z.number().int().positive().default(500),
  /** Regular expression (JavaScript syntax) the whole answer must match. */
  pattern: z.string().optional(),
  /** Shown when `pattern` does not match. */
  patternHint: z.string().optional(),
});

export const inputTextAnswer = z.strictObject({ text: z.string().max(10_000) });

// ── confirm_email ──────────────────────────────────────────────────────────────────────────────────────────────────

/** Confirm the customer reply the agent drafted: send it, send an edited version, or don't send. */
export const confirmEmailPayload = z.object({
  action: z.literal("confirm_email"),
  title: z.string(),
  to: z.string(),
  subject: z.string(),
  body: z.string(),
});

export const confirmEmailAnswer = z.discriminatedUnion("choice", [
  z.strictObject({ choice: z.literal("send") }),
  z.strictObject({
    choice: z.literal("send_edited"),
    subject: z.string().trim().min(1).max(200),
    body: z.string().trim().min(1, "the email needs a body").max(20_000),
  }),
  z.strictObject({ choice: z.literal("dont_send"), note: z.string().max(2000).optional() }),
]);

// ── review_change ──────────────────────────────────────────────────────────────────────────────────────────────────

/** The account details a customer may ask to change. */
export const ACCOUNT_FIELDS = ["address", "email", "payout"] as const;

/** One of several reviews of a customer's account change (e.g. a fraud check and a data check, raised together). */
export const reviewChangePayload = z.object({
  action: z.literal("review_change"),
  title: z.string(),
  /** Which review this is: each is answered on its own, by its own reviewer. */
  review: z.enum(["fraud", "data"]),
  customer: z.object({ name: z.string(), email: z.string() }),
  change: z.object({ field: z.enum(ACCOUNT_FIELDS), from: z.string().nullable(), to: z.string() }),
  /** What the reviewer should check before approving. */
  checks: z.array(z.string()),
  /** The lowest role that may answer this review. */
  requiredRole: z.enum(["operator", "supervisor"]),
});

/** A review's answer: approve, or reject with a reason (either review may stop the change). */
export const reviewChangeAnswer = z.discriminatedUnion("decision", [
  z.strictObject({ decision: z.literal("approve"), note: z.string().max(2000).optional() }),
  z.strictObject({
    decision: z.literal("reject"),
    note: z.string().trim().min(1, "say why the change is rejected").max(2000),
  }),
]);

// ── goodwill_voucher (the example agent of the README's "Add your own agent") ──────────────────────────────────────

/** Grant or decline a goodwill voucher the agent proposes for an unhappy customer. */
export const goodwillVoucherPayload = z.object({
  action: z.literal("goodwill_voucher"),
  title: z.string(),
  customer: z.object({ name: z.string(), email: z.string() }),
  /** The proposed voucher. */
  voucher: money,
  /** Why the customer is unhappy, in their words. */
  complaint: z.string(),
});

export const goodwillVoucherAnswer = z.discriminatedUnion("decision", [
  z.strictObject({ decision: z.literal("grant") }),
  z.strictObject({ decision: z.literal("decline"), note: z.string().trim().min(1, "say why").max(2000) }),
]);

// ── wait_timer: a graph waits for a duration (a durable timer), then goes on ───────────────────────────────────────

/** The longest a graph may wait on one timer: a year. */
export const TIMER_MAX_MS = 366 * 24 * 3_600_000;

/**
 * The graph waits `durationMs` from when it asked (a cooling-off period, a reminder "if there is no answer in 2 days").
 * Nobody needs to answer: when the time is up the deadline sweeper answers `fired` as `system:timer`, once, on one
 * instance, whatever restarted meanwhile. A person may fire it early or cancel the wait, as the agent's policy allows.
 */
export const waitTimerPayload = z.object({
  action: z.literal("wait_timer"),
  title: z.string(),
  durationMs: z.number().int().min(0).max(TIMER_MAX_MS),
  /** Why it waits, and what happens when it fires. */
  reason: z.string(),
  /** What cancelling the wait means, in the agent's words ("The change is not made."). */
  onCancel: z.string().optional(),
});

export const waitTimerAnswer = z.discriminatedUnion("outcome", [
  z.strictObject({ outcome: z.literal("fired"), note: z.string().max(2000).optional() }),
  z.strictObject({
    outcome: z.literal("cancelled"),
    note: z.string().trim().min(1, "say why the wait is cancelled").max(2000),
  }),
]);

// ── run_budget: raised by the runtime, not by an agent (lib/contract/budget-contract.ts, lib/runtime/runs/budget.ts) ─────────────

// ── tool_review: the ecosystem's standard interrupts (LangChain's middleware, agent-inbox), see ./tool-review ──

// ── the union ──────────────────────────────────────────────────────────────────────────────────────────────────────

/** Every interrupt payload a graph may raise, discriminated by `action`. */
export const interruptPayload = z.discriminatedUnion("action", [
  refundApprovalPayload,
  selectOptionPayload,
  inputTextPayload,
  confirmEmailPayload,
  reviewChangePayload,
  goodwillVoucherPayload,
  toolReviewPayload,
  runBudgetPayload,
  waitTimerPayload,
]);

export type InterruptPayload = z.infer<typeof interruptPayload>;
export type InterruptAction = InterruptPayload["action"];
export type PayloadOf<A extends InterruptAction> = Extract<InterruptPayload, { action: A }>;

export type RefundApprovalPayload = z.infer<typeof refundApprovalPayload>;
export type RefundApprovalAnswer = z.infer<typeof refundApprovalAnswer>;
export type SelectOptionPayload = z.infer<typeof selectOptionPayload>;
export type SelectOptionAnswer = z.infer<typeof selectOptionAnswer>;
export type InputTextPayload = z.infer<typeof inputTextPayload>;
export type InputTextAnswer = z.infer<typeof inputTextAnswer>;
export type ConfirmEmailPayload = z.infer<typeof confirmEmailPayload>;
export type ConfirmEmailAnswer = z.infer<typeof confirmEmailAnswer>;
export type ReviewChangePayload = z.infer<typeof reviewChangePayload>;
export type ReviewChangeAnswer = z.infer<typeof reviewChangeAnswer>;
export type GoodwillVoucherAnswer = z.infer<typeof goodwillVoucherAnswer>;
export type WaitTimerPayload = z.infer<typeof waitTimerPayload>;
export type WaitTimerAnswer = z.infer<typeof waitTimerAnswer>;

/** The answer type for each action. */
export interface AnswerOf {
  refund_approval: RefundApprovalAnswer;
  select_option: SelectOptionAnswer;
  input_text: InputTextAnswer;
  confirm_email: ConfirmEmailAnswer;
  review_change: ReviewChangeAnswer;
  goodwill_voucher: GoodwillVoucherAnswer;
  tool_review: ToolReviewAnswer;
  run_budget: RunBudgetAnswer;
  wait_timer: WaitTimerAnswer;
}
export type { RunBudgetAnswer, RunBudgetPayload, ToolReviewAnswer, ToolReviewPayload };

export const INTERRUPT_ACTIONS = [
  "refund_approval",
  "select_option",
  "input_text",
  "confirm_email",
  "review_change",
  "goodwill_voucher",
  "tool_review",
  "run_budget",
  "wait_timer",
] as const satisfies readonly InterruptAction[];
