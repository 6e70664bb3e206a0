import "server-only";
import { HumanMessage } from "@langchain/core/messages";
import { z } from "zod";
import { sharedContract } from "@/lib/agents/kit/contract";
import { orderTicket } from "@/lib/agents/kit/ticket-fields";
import {
  type ToolRule,
  toolReviewActsOnIt,
  toolReviewAuthorizes,
  toolReviewPolicy,
} from "@/lib/agents/kit/tool-review-policy";
import type { InterruptPayload } from "@/lib/contract/questions";
import { formatMoney } from "@/lib/contract/wire";
import type { AgentDefinition, EffectsArgs, SideEffectWarning } from "@/lib/runtime/agents/registry";
import { listRefundsForThread } from "@/lib/shop/refunds";
import { buildOrderSupportGraph } from "./graph";
import type { OrderFacts, StoreCreditArgs } from "./tools";

/** Store credit above this many cents (as proposed or as edited) needs a supervisor to let it run. */
export const STORE_CREDIT_SUPERVISOR_CENTS = 3000;

/** Per reviewed tool: who may let it run. */
export const ORDER_SUPPORT_RULES = {
  issue_store_credit: {
    fourEyes: true,
    role: (args: StoreCreditArgs) =>
      args.amountCents > STORE_CREDIT_SUPERVISOR_CENTS ? "supervisor" : "operator",
    // The amount and the reason the customer reads; never the order (where the money goes).
    editable: ["amountCents", "reason"],
    authorizes: (args: StoreCreditArgs) => [
      { effect: "refund", orderId: args.orderId, amountCents: args.amountCents },
    ],
  } satisfies ToolRule<StoreCreditArgs>,
};

/**
 * A fork from before the credit ran would reach the credit tool again: a new call, so a new credit (the ledger still
 * refuses one above what is left of the order). Said before the fork, for every credit the thread already recorded.
 */
async function creditWarnings({ db, threadId, values }: EffectsArgs): Promise<SideEffectWarning[]> {
  const messages = (values.messages as { name?: string }[] | undefined) ?? [];
  if (messages.some((m) => m.name === "issue_store_credit")) return [];
  return (await listRefundsForThread({ db, threadId })).map((refund) => ({
    code: "side_effect:refund" as const,
    recordId: refund.id,
    message:
      `Store credit of ${formatMoney(refund.amountCents, refund.currency)} for ${refund.orderId} is already recorded on ` +
      "this thread, and a branch cannot undo it. A branch from here may propose and approve a new credit.",
  }));
}

/** What the customer said and what the order lookup found, read back from the conversation. */
function factsOf(values: Record<string, unknown>): OrderFacts | null {
  const messages =
    (values.messages as { getType?: () => string; name?: string; content?: unknown }[] | undefined) ?? [];
  for (const m of [...messages].reverse()) {
    if (m.name !== "lookup_order") continue;
    try {
      return JSON.parse(String(m.content)) as OrderFacts;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Order support: a LangChain `createAgent` whose acting tool (store credit) a person reviews through the standard
 * `humanInTheLoopMiddleware`. Everything the agent owns is in this folder; the console needs no code of it to show,
 * answer, resume, audit or recover its questions.
 */
export const orderSupportAgent: AgentDefinition<InterruptPayload> = {
  id: "order_support",
  title: "Order support",
  description:
    "A customer has trouble with an order: the agent looks it up and proposes store credit for a person to review.",
  version: "1",
  structureHash: "sha256:24fe21741d37ae88",
  interruptNodes: ["HumanInTheLoopMiddleware.after_model"],
  asks: ["tool_review"],
  // A chat: a newer message makes the answer being written to the older one moot. It is stopped; the newer one runs.
  multitask: "interrupt",
  build: (deps) => buildOrderSupportGraph(deps),
  intake: orderTicket,
  // A laptop (€1,299.00): the credit proposed (€50.00) is above the supervisor line.
  examples: [{ message: "My laptop arrived with a cracked screen.", orderRef: "ORD-1008" }],
  input: ({ messageId, text, ticket }) => {
    const orderRef = orderTicket.order(ticket);
    return {
      messages: [
        new HumanMessage({
          id: messageId,
          content: orderRef && !text.includes(orderRef) ? `${text}\n\nOrder: ${orderRef}` : text,
        }),
      ],
    };
  },
  interrupts: sharedContract,
  // The conversation is the agent's state: a fork may not rewrite it.
  fork: { editable: z.strictObject({}).partial(), editableFields: [], asNodes: [], markEdited: () => ({}) },
  effects: (args) => creditWarnings(args),
  policy: toolReviewPolicy(ORDER_SUPPORT_RULES),
  authorizes: toolReviewAuthorizes(ORDER_SUPPORT_RULES),
  /** The customer's own words (their first message): erased with the customer. */
  personalData: ["messages.0.content"],
  actsOnIt: toolReviewActsOnIt,
  context(values) {
    const facts = factsOf(values);
    return {
      orderId: facts?.orderId ?? null,
      customerName: facts?.customerName ?? null,
      currency: facts?.currency ?? null,
    };
  },
};
