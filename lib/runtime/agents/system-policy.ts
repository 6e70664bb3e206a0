import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { type AgentDefinition, listAgents } from "./registry";

/*
 * One decision policy for every principal. A system principal (deadline expiry, migrations, admin tools) has no
 * eyes: if it could approve, send or grant, an admin could configure it to do what four-eyes refuses the admin
 * (an expiry answer of "approve" on their own ticket). So a system gives only non-acting answers — reject, cancel,
 * hold, escalate — unless the agent names the action in `systemMayAct`.
 */

/** Throws `forbidden:system_acting` when `principal` is a system and `answer` acts, where the agent does not allow it. */
export function refuseSystemActing({
  agent,
  principal,
  payload,
  action,
  answer,
}: {
  agent: AgentDefinition;
  principal: Principal;
  payload: unknown;
  action: string;
  answer: unknown;
}): void {
  if (principal.kind !== "system") return;
  if (!agent.actsOnIt(payload, answer) || agent.systemMayAct?.includes(action)) return;
  throw new AppError(
    "forbidden:system_acting",
    `${principal.label} may not give an answer that acts (${action}): a person decides that. A system may only reject, cancel, hold or escalate.`,
    { action, principal: principal.id },
  );
}

/**
 * The agents for which `answer` to an `action` question would act, given by a system (for checking a configured
 * expiry answer before any question exists: each agent reads the action and the answer, as its `actsOnIt` does).
 */
export function agentsWhereSystemWouldAct(action: string, answer: unknown): string[] {
  const acting: string[] = [];
  for (const agent of listAgents()) {
    if (agent.systemMayAct?.includes(action)) continue;
    let acts = false;
    try {
      acts = agent.actsOnIt({ action }, answer);
    } catch {
      acts = false;
    }
    if (acts) acting.push(agent.id);
  }
  return [...new Set(acting)];
}
