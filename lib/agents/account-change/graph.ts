import "server-only";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { type BaseCheckpointSaver, END, START, StateGraph } from "@langchain/langgraph";
import { askHuman, decisionRef } from "@/lib/agents/kit/ask-human";
import { normalizeOrderRef } from "@/lib/agents/kit/order-ref";
import type { AppDb } from "@/lib/db/open";
import { queueEmail } from "@/lib/db/queries/outbox";
import { env } from "@/lib/platform/env";
import { recordAccountChange } from "@/lib/shop/accounts";
import { getOrder } from "@/lib/shop/orders";
import { parseAccountChange } from "./parse";
import {
  AccountChangeState,
  AccountChangeStateV2,
  type AccountChangeUpdate,
  type AccountChangeV2Update,
  type AccountChangeV2Value,
  type AccountChangeValue,
  type ReviewKind,
} from "./state";

/** The graph's nodes in flow order; the two reviews run in parallel (version 2 waits in `cool_off` before applying). */
export const ACCOUNT_CHANGE_NODES = ["intake", "fraud_review", "data_review", "cool_off", "apply"] as const;

const FIELD_NAMES = { address: "postal address", email: "email address", payout: "payout account" } as const;

const REVIEWS: Record<ReviewKind, { requiredRole: "operator" | "supervisor"; checks: string[] }> = {
  fraud: {
    requiredRole: "supervisor",
    checks: [
      "The request comes from the customer's own channel, not a look-alike.",
      "No other change to this account in the last 30 days.",
      "A payout change to a new account is confirmed with the customer by phone.",
    ],
  },
  data: {
    requiredRole: "operator",
    checks: ["The new value is complete and well-formed.", "It matches what the customer wrote."],
  },
};

function threadIdOf(config: LangGraphRunnableConfig): string {
  const threadId = config.configurable?.thread_id;
  if (typeof threadId !== "string" || threadId === "")
    throw new Error("account-change: thread_id is required");
  return threadId;
}

/** intake: read the change and look the customer up by the order they named, if any (v2: fix the cooling-off). */
function intakeNode(db: AppDb, coolOff: boolean) {
  return async (state: AccountChangeValue): Promise<AccountChangeV2Update> => {
    const order = state.orderRef ? await getOrder({ db, orderId: state.orderRef }) : undefined;
    const customer = order
      ? { name: order.customerName, email: order.customerEmail }
      : { name: "Unknown customer", email: "" };
    const change = parseAccountChange(state.customerMessage);
    return {
      customer,
      change: change.field === "email" && order ? { ...change, from: order.customerEmail } : change,
      reviews: {},
      outcome: null,
      // A new payout account is where money goes: it waits before it takes effect (0 = no wait).
      ...(coolOff
        ? { coolOffMs: change.field === "payout" ? env.ACCOUNT_CHANGE_COOLOFF_MS : 0, coolOff: null }
        : {}),
    };
  };
}

/** One review, raised as an interrupt; both reviews are raised in the same super-step. */
function reviewNode(review: ReviewKind) {
  return (state: AccountChangeValue): AccountChangeUpdate => {
    if (!state.change || !state.customer) throw new Error(`${review}_review: no change in the state`);
    const answer = askHuman<"review_change">({
      action: "review_change",
      title: `${review === "fraud" ? "Fraud check" : "Data check"}: new ${FIELD_NAMES[state.change.field]} for ${state.customer.name}`,
      review,
      customer: state.customer,
      change: state.change,
      checks: REVIEWS[review].checks,
      requiredRole: REVIEWS[review].requiredRole,
    });
    return { reviews: { [review]: answer } };
  };
}

/** Both reviews in, both approving. */
function bothApproved(state: AccountChangeValue): boolean {
  const answers = Object.values(state.reviews);
  return answers.length === 2 && answers.every((a) => a?.decision === "approve");
}

/**
 * cool_off (v2): an approved change with a cooling-off period waits on a durable timer before it is made. Nobody has
 * to answer: the timer fires by itself; a supervisor may fire it early, anyone who may review may cancel the change.
 */
function coolOffNode(state: AccountChangeV2Value): AccountChangeV2Update {
  if (!bothApproved(state) || state.coolOffMs <= 0 || !state.change || !state.customer) return {};
  const coolOff = askHuman<"wait_timer">({
    action: "wait_timer",
    title: `Cooling-off: new ${FIELD_NAMES[state.change.field]} for ${state.customer.name}`,
    durationMs: state.coolOffMs,
    reason: `Both reviews approved the new ${FIELD_NAMES[state.change.field]}. It takes effect when the cooling-off period is over, unless someone cancels it first.`,
    onCancel: "the change is not made, and the customer is told so.",
  });
  return { coolOff };
}

/**
 * apply: both reviews approved → the change is recorded as an `account_update` effect (keyed by this step), which the
 * dispatcher applies to the customer's account once and only then emails them that it was made; any rejection → the
 * customer is told it was not made. The reply says what was recorded, never more.
 */
function applyNode(db: AppDb) {
  return async (state: AccountChangeValue, config: LangGraphRunnableConfig): Promise<AccountChangeUpdate> => {
    const answers = Object.values(state.reviews);
    const rejected = answers.filter((a) => a?.decision === "reject");
    const cancelled = (state as Partial<AccountChangeV2Value>).coolOff;
    const approved = bothApproved(state) && cancelled?.outcome !== "cancelled";
    const what = state.change ? FIELD_NAMES[state.change.field] : "account details";
    const name = state.customer?.name ?? "";
    const to = state.customer?.email ?? "";
    const threadId = threadIdOf(config);
    if (approved && state.change && to) {
      const { effect } = await recordAccountChange({
        db,
        decisionRef: decisionRef(config),
        threadId,
        accountEmail: to,
        customerName: name,
        field: state.change.field,
        from: state.change.from,
        to: state.change.to,
      });
      const body = `Hello ${name},\n\nBoth reviews approved the change of your ${what}. It is being applied to your account now; we will email you as soon as it is done.\n\nBest,\nSupport`;
      return {
        outcome: { status: "applied", reasons: [], emailId: null, effectId: effect.id },
        messages: [new AIMessage({ id: `reply-${threadId}`, content: body })],
      };
    }
    const reasons =
      cancelled?.outcome === "cancelled"
        ? [`Cancelled during the cooling-off period: ${cancelled.note}`]
        : approved
          ? [
              "No customer account matches this request (no order of theirs was named), so nothing could be changed.",
            ]
          : rejected.map((r) => (r && "note" in r ? (r.note ?? "") : "")).filter(Boolean);
    const body = `Hello ${name},\n\nWe could not change your ${what}. Please contact us so we can help.\n\nBest,\nSupport`;
    // The reviews' outcome decides the email: this step's reference keys it (a re-run finds its own email).
    const email = to
      ? (
          await queueEmail({
            db,
            decisionRef: decisionRef(config),
            threadId,
            to,
            subject: `Your ${what}`,
            body,
          })
        ).email.id
      : null;
    return {
      outcome: { status: "rejected", reasons, emailId: email, effectId: null },
      messages: [new AIMessage({ id: `reply-${threadId}`, content: body })],
    };
  };
}

/**
 * Build the account-change agent: intake → (fraud_review ∥ data_review) → cool_off → apply. Version 1 (still
 * registered for the threads that started on it) has no cooling-off: the reviews lead straight to apply.
 */
export function buildAccountChangeGraph({
  checkpointer,
  db,
}: {
  checkpointer: BaseCheckpointSaver;
  db: AppDb;
}) {
  return new StateGraph(AccountChangeStateV2)
    .addNode("intake", intakeNode(db, true))
    .addNode("fraud_review", reviewNode("fraud"))
    .addNode("data_review", reviewNode("data"))
    .addNode("cool_off", coolOffNode)
    .addNode("apply", applyNode(db))
    .addEdge(START, "intake")
    .addEdge("intake", "fraud_review")
    .addEdge("intake", "data_review")
    .addEdge(["fraud_review", "data_review"], "cool_off")
    .addEdge("cool_off", "apply")
    .addEdge("apply", END)
    .compile({ checkpointer, name: "account_change" });
}

/** Version 1 of the graph: intake → (fraud_review ∥ data_review) → apply. */
export function buildAccountChangeGraphV1({
  checkpointer,
  db,
}: {
  checkpointer: BaseCheckpointSaver;
  db: AppDb;
}) {
  return new StateGraph(AccountChangeState)
    .addNode("intake", intakeNode(db, false))
    .addNode("fraud_review", reviewNode("fraud"))
    .addNode("data_review", reviewNode("data"))
    .addNode("apply", applyNode(db))
    .addEdge(START, "intake")
    .addEdge("intake", "fraud_review")
    .addEdge("intake", "data_review")
    .addEdge(["fraud_review", "data_review"], "apply")
    .addEdge("apply", END)
    .compile({ checkpointer, name: "account_change" });
}

/** A customer message starting (or continuing) an account-change thread. */
export function accountChangeInput({
  messageId,
  text,
  orderRef,
}: {
  messageId: string;
  text: string;
  orderRef: string | null;
}): AccountChangeUpdate {
  return {
    messages: [new HumanMessage({ id: messageId, content: text })],
    customerMessage: text,
    orderRef: normalizeOrderRef(orderRef) ?? normalizeOrderRef(text.match(/ORD-\d{4}/i)?.[0] ?? null),
  };
}
