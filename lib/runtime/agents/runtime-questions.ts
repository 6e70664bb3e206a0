import "server-only";
import { z } from "zod";
import { type RunBudgetPayload, runBudgetAnswerFor, runBudgetPayload } from "@/lib/contract/budget-contract";
import type { AgentDefinition } from "./agent-definition";

/*
 * Questions the runtime asks on any agent's behalf (a run at its spending limit: lib/runtime/runs/budget.ts). Every agent
 * asks them, so the registry adds them to every definition: the agent's contract, policy and `asks` do not name them,
 * and the registry tests (labels, bulk, summaries, the pre-click check) cover them for every agent.
 */
export const RUNTIME_QUESTIONS = ["run_budget"] as const;

function runtimeQuestion(raw: unknown): RunBudgetPayload | null {
  if ((raw as { action?: unknown } | null)?.action !== "run_budget") return null;
  const parsed = runBudgetPayload.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** The definition with the runtime's questions: asked, read, validated and decided (no four-eyes) like its own. */
export function withRuntimeQuestions<P>(agent: AgentDefinition<P>): AgentDefinition<P> {
  const own = agent.interrupts;
  return {
    ...agent,
    asks: [...new Set([...agent.asks, ...RUNTIME_QUESTIONS])],
    interrupts: {
      // Whatever else the contract says passes through as it is (a member added later is never dropped here).
      ...own,
      parse(raw) {
        const question = runtimeQuestion(raw);
        return question
          ? { ok: true, payload: question as P, action: question.action, title: question.title }
          : own.parse(raw);
      },
      validate(payload, answer) {
        const question = runtimeQuestion(payload);
        if (!question) return own.validate(payload, answer);
        const parsed = runBudgetAnswerFor(question).safeParse(answer);
        return parsed.success
          ? { ok: true, answer: parsed.data }
          : { ok: false, error: z.prettifyError(parsed.error) };
      },
      responseSchema(payload) {
        const question = runtimeQuestion(payload);
        return question
          ? (z.toJSONSchema(runBudgetAnswerFor(question), { unrepresentable: "any" }) as Record<
              string,
              unknown
            >)
          : own.responseSchema(payload);
      },
      summarize(raw) {
        const question = runtimeQuestion(raw);
        return question
          ? { title: question.title, orderId: null, customerName: null, amountCents: null, currency: null }
          : own.summarize(raw);
      },
      actingAnswer(payload) {
        const question = runtimeQuestion(payload);
        if (!question) return own.actingAnswer?.(payload) ?? null;
        // Raising the limit lets the agent spend more: the answer the pre-click check asks about.
        return { decision: "raise", to: Math.max(question.budget, question.used) * 2 };
      },
      // A spending limit authorizes no refund, account change or voucher.
      authorizes(payload, answer) {
        return runtimeQuestion(payload) ? [] : (own.authorizes?.(payload, answer) ?? []);
      },
    },
    // Whoever may answer a question of this thread may answer these (an operator: the routes' floor); no four-eyes.
    // What the agent's policy declares about itself (its rules, read by the generated suites) stays on it.
    policy: keepDeclaration(agent.policy, (attempt) => {
      if (runtimeQuestion(attempt.payload)) return;
      agent.policy(attempt);
    }),
    // Raising a limit acts (so no system principal, such as a deadline's expiry, may do it); stopping does not.
    actsOnIt(payload, answer) {
      if ((payload as { action?: unknown } | null)?.action === "run_budget") {
        return (answer as { decision?: unknown } | null)?.decision === "raise";
      }
      return agent.actsOnIt(payload, answer);
    },
  };
}

/** `wrapper` with the keyed properties `policy` carries (a declaration of its rules), so wrapping hides nothing. */
function keepDeclaration<F extends object>(policy: object, wrapper: F): F {
  for (const key of Object.getOwnPropertySymbols(policy)) {
    Object.defineProperty(wrapper, key, {
      value: (policy as Record<symbol, unknown>)[key],
      enumerable: false,
    });
  }
  return wrapper;
}
