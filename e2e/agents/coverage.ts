import { declaredToolRules, KIT_QUESTION_KINDS } from "@hitl/agent-kit";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";
import { RUNTIME_QUESTIONS } from "@/lib/runtime/agents/runtime-questions";

/**
 * Whether the generated suites (e2e/agents/) cover an agent: every question it asks is one of the kit's kinds, and its
 * policy is declared as per-tool rules (`toolReviewPolicy`), so what each principal may answer can be derived from
 * the declaration. The shipped agents with question kinds of their own are covered by hand-written scenarios
 * (e2e/api/policy-matrix.int.test.ts).
 */
export function generatedSuitesCover(agent: AgentDefinition): boolean {
  return (
    agent.asks.every(
      (kind) =>
        (KIT_QUESTION_KINDS as readonly string[]).includes(kind) ||
        (RUNTIME_QUESTIONS as readonly string[]).includes(kind),
    ) && declaredToolRules(agent.policy) !== null
  );
}

/** The agents the generated suites run for: every covered one, or the one `AGENT_CHECK` names (`npm run agent:check`). */
export function agentsUnderCheck(all: AgentDefinition[]): AgentDefinition[] {
  const only = process.env.AGENT_CHECK;
  const covered = all.filter(generatedSuitesCover);
  if (!only) return covered;
  const agent = all.find((a) => a.id === only);
  if (!agent)
    throw new Error(
      `agent:check: no agent ${only} is registered (registered: ${all.map((a) => a.id).join(", ")})`,
    );
  if (!generatedSuitesCover(agent)) {
    throw new Error(
      `agent:check: ${only} asks ${agent.asks.join(", ")} or decides by code the suites cannot read: declare its policy with toolReviewPolicy and ask the kit's question kinds (${KIT_QUESTION_KINDS.join(", ")})`,
    );
  }
  return [agent];
}

/** The tickets the suites file for an agent: its declared examples, else a message alone. */
export function exampleTickets(agent: AgentDefinition): Record<string, unknown>[] {
  return agent.examples?.length ? [...agent.examples] : [{ message: "Hello, I need help with my account." }];
}
