import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { InterruptPayload } from "@/lib/contract/questions";
import { reviewDecisions, sentBackToModel, toolReviewActs } from "@/lib/contract/questions/tool-review";
import { hasRole, type Role } from "@/lib/contract/roles";
import type { Authorization } from "@/lib/contract/wire";
import type { DecisionAttempt } from "@/lib/runtime/agents/registry";
import { refuseOwnInput } from "./four-eyes";

/** Where a policy built by {@link toolReviewPolicy} keeps its declaration. */
export const DECLARED_TOOL_RULES = Symbol.for("hitl.toolReviewRules");

/** Who may let a reviewed tool call run, declared per tool in the agent's definition. */
export interface ToolRule<Args = Record<string, unknown>> {
  /** The lowest role that may approve (or edit and approve) it; default operator. A function of the arguments: limits. */
  role?: Role | ((args: Args) => Role);
  /** Whoever supplied input that led to the call (filed, started, answered, edited) may not let it run. */
  fourEyes?: boolean;
  /**
   * The arguments a reviewer may change by an edit (their bounds are the tool's schema). Every other argument — above
   * all the money's destination (an order, a customer, an account) — is the agent's: an edit that changes one is
   * refused (`forbidden:edit_not_allowed`). Default: none (an edit may change nothing, so approve or reject).
   */
  editable?: readonly (keyof Args & string)[];
  /** The effect a run of the call with these arguments carries out (written into the decision's receipt). */
  authorizes?: (args: Args) => Authorization[];
}

/** The arguments a reviewed call runs with under this answer (the edited ones for an edit), per request. */
function runningArgs(payload: Extract<InterruptPayload, { action: "tool_review" }>, answer: unknown) {
  // A batch LangChain sends back to the model runs none of its calls: they authorize nothing.
  if (sentBackToModel(answer)) return [];
  const decisions = reviewDecisions(answer);
  return payload.requests.flatMap((request, i) => {
    const d = decisions[i];
    if (!d || (d.type !== "approve" && d.type !== "edit")) return [];
    return [
      {
        name: request.name,
        args: d.type === "edit" ? d.args : request.args,
        proposed: request.args,
        edited: d.type === "edit",
      },
    ];
  });
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The arguments an edit changed (added, removed or given another value), by name. */
function changedArgs(proposed: Record<string, unknown>, edited: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(proposed), ...Object.keys(edited)]);
  return [...names].filter((name) => !same(proposed[name], edited[name])).sort();
}

/** What the reviewed calls an answer lets run authorize, by each tool's rule (the receipt's authorizations). */
export function toolReviewAuthorizes(rules: Record<string, ToolRule<never>>) {
  return (payload: InterruptPayload, answer: unknown): Authorization[] => {
    if (payload.action !== "tool_review") return [];
    return runningArgs(payload, answer).flatMap((call) => {
      const rule = rules[call.name] as ToolRule | undefined;
      return rule?.authorizes?.(call.args) ?? [];
    });
  };
}

/** Whether the answer lets any reviewed call run: the answers the runtime collects `involved` for. */
export function toolReviewActsOnIt(payload: Pick<InterruptPayload, "action">, answer: unknown): boolean {
  // Read from the answer alone: a deadline's expiry answer is checked before any question exists.
  return payload.action === "tool_review" && toolReviewActs(answer);
}

/**
 * The decision policy of an agent with reviewed tool calls: for every call the answer lets run, the tool's rule —
 * four-eyes, and the role its arguments need (edited arguments count, so raising an amount by an edit needs the role
 * the new amount needs). Rejecting is anyone's with the operator role. A reviewed tool without a rule is refused:
 * nothing acts on the world by omission.
 */
export function toolReviewPolicy(rules: Record<string, ToolRule<never>>) {
  const policy = ({ payload, answer, principal, involved }: DecisionAttempt<InterruptPayload>): void => {
    if (payload.action !== "tool_review") return;
    for (const call of runningArgs(payload, answer)) {
      const rule = rules[call.name] as ToolRule | undefined;
      if (!rule) {
        throw new AppError("forbidden:tool_without_rule", `No rule says who may let ${call.name} run.`, {
          tool: call.name,
        });
      }
      if (call.edited) {
        const allowed = new Set<string>(rule.editable ?? []);
        const refused = changedArgs(call.proposed, call.args).filter((name) => !allowed.has(name));
        if (refused.length > 0) {
          throw new AppError(
            "forbidden:edit_not_allowed",
            `An edit of ${call.name} may change ${allowed.size > 0 ? [...allowed].join(", ") : "nothing"}, not ${refused.join(", ")}: that is the agent's to propose${refused.some((n) => /order|customer|account|payout|iban/i.test(n)) ? " (where the money goes)" : ""}. Reject it and say why instead.`,
            { rule: "editable_arguments", tool: call.name, fields: refused, editable: [...allowed] },
          );
        }
      }
      if (rule.fourEyes) refuseOwnInput({ principal, involved, what: `let ${call.name} run` });
      const needed = typeof rule.role === "function" ? rule.role(call.args) : (rule.role ?? "operator");
      if (!hasRole(principal.role, needed)) {
        throw new AppError(
          "forbidden:tool_role",
          `Letting ${call.name} run with these arguments needs a ${needed}.`,
          {
            rule: "role_required",
            tool: call.name,
            role: needed,
          },
        );
      }
    }
  };
  // The rules stay readable on the policy: the generated policy suite derives what it expects from them, not from
  // calling the policy (e2e/agents/policy.int.test.ts).
  return Object.assign(policy, { [DECLARED_TOOL_RULES]: rules });
}

/** The per-tool rules an agent's policy declares, when it was built by {@link toolReviewPolicy}; else null. */
export function declaredToolRules(policy: unknown): Record<string, ToolRule> | null {
  if (typeof policy !== "function") return null;
  const rules = (policy as unknown as Record<symbol, unknown>)[DECLARED_TOOL_RULES];
  return rules && typeof rules === "object" ? (rules as Record<string, ToolRule>) : null;
}
