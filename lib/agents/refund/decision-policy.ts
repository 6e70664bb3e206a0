import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { InterruptPayload } from "@/lib/contract/questions";
import { hasRole } from "@/lib/contract/roles";
import { env } from "@/lib/platform/env";
import type { DecisionAttempt } from "@/lib/runtime/agents/registry";
import { refuseOwnInput } from "../kit/four-eyes";

/** Whether an answer makes something happen to the customer: approves money (in full or in part) or sends mail. */
export function refundActsOnIt(payload: InterruptPayload, answer: unknown): boolean {
  if (payload.action === "refund_approval") {
    const decision = (answer as { decision?: unknown } | null)?.decision;
    return decision === "approve" || decision === "approve_partial";
  }
  if (payload.action === "confirm_email")
    return (answer as { choice?: unknown } | null)?.choice !== "dont_send";
  return false;
}

/**
 * The refund agent's four-eyes. Approving a refund (in full or in part) is refused to anyone who supplied input that
 * led to the request (who filed the ticket, started a run since the thread's previous decision, answered a free-text
 * question on the way, or edited the thread's state), and a refund request above FOUR_EYES_MIN_CENTS needs a
 * supervisor. Sending the customer an email is refused to whoever edited the thread's state (the draft was written
 * from their edit). Rejecting and not sending are anyone's with the operator role.
 */
export function refundDecisionPolicy({
  payload,
  answer,
  principal,
  involved,
}: DecisionAttempt<InterruptPayload>): void {
  if (!refundActsOnIt(payload, answer)) return;
  if (payload.action === "confirm_email") {
    const what = "send its reply";
    refuseOwnInput({ principal, involved, what, kinds: ["editor"], code: "forbidden:four_eyes_edited" });
    return;
  }
  if (payload.action !== "refund_approval") return;
  refuseOwnInput({ principal, involved, what: "approve its refund" });
  if (payload.requested.amountCents > env.FOUR_EYES_MIN_CENTS && !hasRole(principal.role, "supervisor")) {
    throw new AppError(
      "forbidden:four_eyes_supervisor",
      `Refunds above ${(env.FOUR_EYES_MIN_CENTS / 100).toFixed(2)} ${payload.requested.currency} need a supervisor to approve them.`,
      { rule: "supervisor_required", thresholdCents: env.FOUR_EYES_MIN_CENTS },
    );
  }
}
