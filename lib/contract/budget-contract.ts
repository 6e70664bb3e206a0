import { z } from "zod";

/*
 * The question the runtime asks on any agent's behalf when a run reaches a spending limit (lib/runtime/runs/budget.ts): its
 * payload, its answer and how its amounts read. Isomorphic, and apart from the agents' contract (lib/interrupts, which
 * includes it in its union) because the runtime may not read that contract.
 */

/** The spending limits a run is held to: tokens of the run, of the thread (all its runs), and their cost when priced. */
export const BUDGET_LIMITS = [
  "run_tokens",
  "thread_tokens",
  "run_cost_micros",
  "thread_cost_micros",
] as const;
export type BudgetLimit = (typeof BUDGET_LIMITS)[number];

/**
 * A run reached a spending limit at a model call: the call waits until an operator raises the limit (for this thread)
 * or stops the run. Amounts are tokens, or US dollars in millionths for the cost limits.
 */
export const runBudgetPayload = z.object({
  action: z.literal("run_budget"),
  title: z.string(),
  limit: z.enum(BUDGET_LIMITS),
  /** The limit in force when the run paused, and what was spent against it. */
  budget: z.number().int().nonnegative(),
  used: z.number().int().nonnegative(),
  /** Everything spent so far, for the operator's picture. */
  spent: z.object({
    runTokens: z.number().int().nonnegative(),
    threadTokens: z.number().int().nonnegative(),
    runCostMicros: z.number().int().nonnegative().optional(),
    threadCostMicros: z.number().int().nonnegative().optional(),
  }),
  /** The node whose model call waits. */
  node: z.string().optional(),
});

/** The largest limit an answer may set (tokens, or millionths of a dollar: $1,000). */
export const BUDGET_MAX = 1_000_000_000;

export const runBudgetAnswer = z.discriminatedUnion("decision", [
  z.strictObject({
    decision: z.literal("raise"),
    /** The new limit for this thread (same unit as the payload's). */
    to: z.number().int().positive().max(BUDGET_MAX, "a limit cannot be more than 1,000,000,000"),
    note: z.string().max(2000).optional(),
  }),
  z.strictObject({
    decision: z.literal("stop"),
    note: z.string().trim().min(1, "say why the run is stopped").max(2000),
  }),
]);

export type RunBudgetPayload = z.infer<typeof runBudgetPayload>;
export type RunBudgetAnswer = z.infer<typeof runBudgetAnswer>;

/** The answer schema for one question: a raised limit must be above what was already spent. */
export function runBudgetAnswerFor(payload: Pick<RunBudgetPayload, "used" | "limit">) {
  return runBudgetAnswer.refine((a) => a.decision !== "raise" || a.to > payload.used, {
    message: `the new limit must be more than the ${formatBudget(payload.limit, payload.used)} already spent`,
    path: ["to"],
  });
}

/** A budget amount as people read it: "12,500 tokens", "$0.0125". */
export function formatBudget(limit: BudgetLimit | string, value: number): string {
  if (limit.endsWith("_cost_micros")) {
    const dollars = value / 1_000_000;
    return `$${dollars.toLocaleString("en", { minimumFractionDigits: 2, maximumFractionDigits: dollars < 1 ? 4 : 2 })}`;
  }
  return `${value.toLocaleString("en")} ${value === 1 ? "token" : "tokens"}`;
}

/** Which limit it is, for people. */
export const BUDGET_LIMIT_LABELS: Record<BudgetLimit, string> = {
  run_tokens: "tokens per run",
  thread_tokens: "tokens per thread",
  run_cost_micros: "cost per run",
  thread_cost_micros: "cost per thread",
};
