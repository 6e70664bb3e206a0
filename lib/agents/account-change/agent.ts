import "server-only";
import { z } from "zod";
import { editableMessage, editableOrderRef } from "@/lib/agents/kit/channels";
import { sharedContract } from "@/lib/agents/kit/contract";
import { emailWarnings } from "@/lib/agents/kit/email-effects";
import { refuseOwnInput } from "@/lib/agents/kit/four-eyes";
import { orderTicket } from "@/lib/agents/kit/ticket-fields";
import { AppError } from "@/lib/contract/errors";
import type { InterruptPayload } from "@/lib/contract/questions";
import { hasRole } from "@/lib/contract/roles";
import type { AgentDefinition, DecisionAttempt } from "@/lib/runtime/agents/registry";
import { accountChangeInput, buildAccountChangeGraph, buildAccountChangeGraphV1 } from "./graph";

/** What a fork may change: the customer's own words (and the order naming them); never a review or the outcome. */
const editable = z.strictObject({ customerMessage: editableMessage, orderRef: editableOrderRef }).partial();

const approves = (answer: unknown) => (answer as { decision?: unknown } | null)?.decision === "approve";

/**
 * Who may answer a review: the role each review names (the fraud check needs a supervisor), never someone whose input
 * led to the request (who filed it, started a run on it, edited it), and never the same person for both reviews —
 * the point of two reviews is two people. Rejecting needs only the review's role.
 */
function reviewPolicy({
  payload,
  answer,
  principal,
  involved,
  siblings,
  decided,
}: DecisionAttempt<InterruptPayload>): void {
  if (payload.action === "wait_timer") {
    coolOffPolicy({ answer, principal, involved, decided });
    return;
  }
  if (payload.action !== "review_change") return;
  if (!hasRole(principal.role, payload.requiredRole)) {
    throw new AppError(
      "forbidden:review_role",
      `The ${payload.review} check needs a ${payload.requiredRole}.`,
      {
        rule: "review_role",
        needed: payload.requiredRole,
      },
    );
  }
  if (!approves(answer)) return;
  refuseOwnInput({ principal, involved, what: "approve this change" });
  if (
    siblings.some(
      (s) => s.action === "review_change" && s.resolvedById === principal.id && approves(s.answer),
    )
  ) {
    throw new AppError(
      "forbidden:four_eyes_both_reviews",
      "You approved the other review of this change: a second person must approve this one.",
      { rule: "two_reviewers" },
    );
  }
}

/**
 * The cooling-off timer: it fires by itself (`system:timer`); a person who fires it early skips the protection, so that
 * takes a supervisor — and one with no hand in the change: not whoever filed it (or started or edited it), nor either
 * reviewer who approved it (four-eyes on the shortcut). Cancelling (the change is not made) is anyone's who may review.
 */
function coolOffPolicy({
  answer,
  principal,
  involved,
  decided,
}: Pick<DecisionAttempt<InterruptPayload>, "answer" | "principal" | "involved" | "decided">) {
  const fired = (answer as { outcome?: unknown } | null)?.outcome === "fired";
  if (!fired || principal.kind === "system") return;
  if (!hasRole(principal.role, "supervisor")) {
    throw new AppError(
      "forbidden:cool_off_early",
      "Ending the cooling-off period early needs a supervisor: it fires by itself when the time is up.",
      { rule: "role_required", role: "supervisor" },
    );
  }
  refuseOwnInput({ principal, involved, what: "end its cooling-off early" });
  if (
    decided.some((d) => d.action === "review_change" && d.resolvedById === principal.id && approves(d.answer))
  ) {
    throw new AppError(
      "forbidden:four_eyes_own_thread",
      "You approved this change: someone else must end its cooling-off early.",
      { rule: "not_own_approval", because: "approved this change" },
    );
  }
}

/** The account-change agent: a customer asks to change their address, email or payout account; two people review. */
export const accountChangeAgent: AgentDefinition<InterruptPayload> = {
  id: "account_change",
  title: "Account change",
  description:
    "A customer asks to change their address, email or payout account: a fraud check and a data check.",
  version: "2",
  structureHash: "sha256:9e15bb76d2dbecb5",
  interruptNodes: ["fraud_review", "data_review", "cool_off"],
  asks: ["review_change", "wait_timer"],
  build: ({ checkpointer, db }) => buildAccountChangeGraph({ checkpointer, db }),
  intake: orderTicket,
  input: ({ messageId, text, ticket }) =>
    accountChangeInput({ messageId, text, orderRef: orderTicket.order(ticket) }),
  interrupts: sharedContract,
  fork: {
    editable,
    editableFields: Object.keys(editable.shape),
    asNodes: [],
    markEdited: (principalId) => ({ editedBy: principalId }),
  },
  effects: ({ db, threadId, values }) =>
    values.outcome ? Promise.resolve([]) : emailWarnings({ db, threadId }),
  policy: reviewPolicy,
  /** The customer's own words (and what they asked to change to): erased with the customer. */
  personalData: ["customerMessage", "change.to", "change.from"],
  // Approving a review acts, and so does firing the cooling-off (the change is then made).
  actsOnIt: (payload, answer) =>
    (payload.action === "review_change" && approves(answer)) ||
    (payload.action === "wait_timer" && (answer as { outcome?: unknown } | null)?.outcome === "fired"),
  // The cooling-off timer fires by itself when its time is up (system:timer): that is its point.
  systemMayAct: ["wait_timer"],
  context(values) {
    const customer = values.customer as { name?: unknown } | null | undefined;
    return {
      orderId: typeof values.orderRef === "string" ? values.orderRef : null,
      customerName: typeof customer?.name === "string" ? customer.name : null,
    };
  },
};

/** Version 1 (no cooling-off), kept registered for the threads that started on it: they finish on it. */
export const accountChangeAgentV1: AgentDefinition<InterruptPayload> = {
  ...accountChangeAgent,
  version: "1",
  structureHash: "sha256:9398e1979b0378c7",
  interruptNodes: ["fraud_review", "data_review"],
  asks: ["review_change"],
  build: ({ checkpointer, db }) => buildAccountChangeGraphV1({ checkpointer, db }),
};
