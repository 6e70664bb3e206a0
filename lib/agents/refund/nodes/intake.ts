import "server-only";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { askHuman } from "@/lib/agents/kit/ask-human";
import { getThread } from "@/lib/db/queries/threads";
import { normalizeOrderRef, ORDER_REF_PATTERN, orderRefsIn } from "../classify-rules";
import { classifyPrompt, parseClassification } from "../prompts";
import type { OrderSnapshot } from "../state";
import { LOOKUP_ORDER_TOOL, type LookupResult, lookupOrderTool } from "../tools";
import { type NodeContext, type RefundNode, stableId, streamToMessage, threadIdOf } from "./context";

/**
 * classify: intent, reason, order reference and requested amount, by the model (JSON) with the rules as fallback.
 * Starts a new request, so everything derived from an earlier message on the thread is cleared.
 */
export function classifyNode({ model }: NodeContext): RefundNode {
  return async (state, config) => {
    const customerMessage =
      state.customerMessage || (state.messages.findLast((m) => m.getType() === "human")?.text ?? "");
    // The classifier's JSON is internal: keep it out of the "messages" stream the customer-facing view renders.
    const response = await streamToMessage(model, classifyPrompt(customerMessage), {
      ...config,
      tags: [...(config.tags ?? []), "langsmith:nostream"],
    });
    const classification = parseClassification(response.text, customerMessage);
    return {
      customerMessage,
      intent: classification.intent,
      reason: classification.reason,
      // An order reference given by the caller wins over what the model read.
      orderRef: normalizeOrderRef(state.orderRef) ?? classification.orderRef,
      requested: classification.requestedCents,
      order: null,
      policy: null,
      decision: null,
      refundMethod: null,
      refund: null,
      reply: null,
      email: null,
    };
  };
}

/** ask_order: the order is unknown (none given, or not found); an operator supplies the number. */
export function askOrderNode(): RefundNode {
  return (state) => {
    const answer = askHuman<"input_text">({
      action: "input_text",
      title: "Which order is this about?",
      question: state.orderRef
        ? `There is no order ${state.orderRef}. Which order is the customer asking about?`
        : "The customer did not give an order number. Which order are they asking about?",
      context: state.customerMessage,
      placeholder: "ORD-1234",
      // Length limits stay loose: the pattern is the rule, and its hint is the one message worth showing.
      minLength: 1,
      maxLength: 40,
      pattern: ORDER_REF_PATTERN,
      patternHint: "An order number like ORD-1234",
    });
    return { orderRef: normalizeOrderRef(answer.text), order: null };
  };
}

/**
 * lookup_order: a call of the agent's lookup tool (./tools.ts). The AI message with the call and the tool's result are
 * appended to `messages`, with ids derived from the thread, the order and the attempt, so a re-run of this node
 * replaces rather than duplicates them.
 */
export function lookupOrderNode({ db }: NodeContext): RefundNode {
  const lookup = lookupOrderTool({ db });
  return async (state, config) => {
    const orderId = state.orderRef;
    if (!orderId) throw new Error("lookup_order: no order reference in the state");
    const attempt = state.messages.filter(
      (m) => ToolMessage.isInstance(m) && m.name === LOOKUP_ORDER_TOOL,
    ).length;
    const callId = stableId(threadIdOf(config), LOOKUP_ORDER_TOOL, orderId, attempt);
    const looked = JSON.parse(await lookup.invoke({ orderId })) as LookupResult;
    const found = looked.found ? looked.order : null;
    const confirmed = found
      ? await senderIsCustomer({ db, state, order: found, threadId: threadIdOf(config) })
      : true;
    const order = confirmed ? found : null;
    const call = new AIMessage({
      id: stableId(callId, "call"),
      content: "",
      tool_calls: [{ id: callId, name: LOOKUP_ORDER_TOOL, args: { orderId }, type: "tool_call" }],
    });
    const result = new ToolMessage({
      id: stableId(callId, "result"),
      tool_call_id: callId,
      name: LOOKUP_ORDER_TOOL,
      content: JSON.stringify(order ? { found: true, order } : { found: false, orderId }),
    });
    if (!confirmed) {
      // Nothing about this order reaches anyone: no refund, no email to its customer. The reply waits for a person.
      return { messages: [call, result], order: null, orderRef: null, intent: "other" as const };
    }
    return { messages: [call, result], order };
  };
}

/**
 * Identity: the agent may act on an order and write to its customer only when the ticket's sender is that customer.
 * The ticket came with the order (the ticket system tied its sender to it) or the customer's own message names it (a
 * message a fork edited is not theirs: `editedBy`);
 * an order number typed by an operator when the agent asked is checked by a person first. Asked again on a re-run,
 * the same answer comes back (LangGraph replays the node's interrupts in order).
 */
async function senderIsCustomer({
  db,
  state,
  order,
  threadId,
}: {
  db: NodeContext["db"];
  state: { customerMessage: string; editedBy: string | null };
  order: OrderSnapshot;
  threadId: string;
}): Promise<boolean> {
  // The customer's own words name the order — unless a fork rewrote them: then they are an editor's, and a person
  // checks who the sender is (an edit never vouches for identity).
  if (!state.editedBy && orderRefsIn(state.customerMessage).includes(order.id)) return true;
  const ticket = await getThread({ db, threadId });
  if (normalizeOrderRef(ticket?.orderRef) === order.id) return true;
  const answer = askHuman<"select_option">({
    action: "select_option",
    title: `Is the sender ${order.customerName}?`,
    question: `${order.id} is ${order.customerName}'s order, but this ticket did not come with it and the customer's message does not name it. The agent refunds it and writes to ${order.customerName} only if the sender is them. Did you check that?`,
    options: [
      {
        id: "sender_is_customer",
        label: `Yes, the sender is ${order.customerName}`,
        description: `Checked in the ticket system: the agent goes on with ${order.id}.`,
      },
      {
        id: "sender_unknown",
        label: "No, or not sure",
        description: `Nothing is refunded and nothing is sent to ${order.customerName}; the ticket waits for a person to reply.`,
      },
    ],
  });
  return answer.optionId === "sender_is_customer";
}
