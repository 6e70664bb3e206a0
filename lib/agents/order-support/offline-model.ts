import { estimatedUsage } from "@/lib/agents/kit/offline-usage";
import "server-only";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { formatMoney } from "@/lib/contract/wire";
import type { CreditResult, OrderFacts } from "./tools";

/*
 * The order-support agent's offline model: deterministic tool calls with no key and no network, so the agent works in
 * the demo and in tests exactly as it would with a model that calls tools. It looks the order named in the customer's
 * message up, proposes store credit of 10 % of the order (1.00 to 50.00, never more than is left to refund), and
 * words its reply from what the credit tool recorded — nothing else.
 */

const ORDER_REF = /\bORD-\d{3,}\b/i;

/** The credit the model proposes for an order: 10 % of it, at least 1.00 and at most 50.00, within what is left. */
export function proposedCreditCents(order: OrderFacts): number {
  const tenth = Math.round((order.totalCents ?? 0) / 10);
  return Math.min(order.refundableCents ?? 0, Math.min(5000, Math.max(100, tenth)));
}

function parse<T>(message: BaseMessage | undefined): T | null {
  try {
    return JSON.parse(String(message?.content ?? "")) as T;
  } catch {
    return null;
  }
}

export function answerFor(messages: BaseMessage[]): AIMessage {
  const last = messages.at(-1);
  // A stable id per turn: a replayed step writes the same message.
  const id = `order-support-${messages.length}`;
  const call = (name: string, args: Record<string, unknown>) =>
    new AIMessage({
      id,
      content: "",
      tool_calls: [{ id: `call_${name}_${messages.length}`, name, args, type: "tool_call" }],
    });
  const say = (content: string) => new AIMessage({ id, content });

  if (last instanceof ToolMessage || last?.getType() === "tool") {
    const tool = last as ToolMessage;
    if (tool.name === "lookup_order") {
      const order = parse<OrderFacts>(tool);
      if (!order?.found)
        return say(
          `We could not find the order ${order?.orderId ?? ""}. Please check the number and write again.`,
        );
      const amountCents = proposedCreditCents(order);
      if (amountCents <= 0)
        return say(
          `Order ${order.orderId} has been refunded in full already, so no store credit can be added.`,
        );
      return call("issue_store_credit", {
        orderId: order.orderId,
        amountCents,
        reason: "Sorry for the trouble with your order",
      });
    }
    if (tool.name === "issue_store_credit") {
      // A rejected call comes back as an error tool message with the reviewer's words: nothing was recorded.
      if (tool.status === "error")
        return say(
          "We have looked at your request and will not add store credit this time. A colleague may follow up with you.",
        );
      const credit = parse<CreditResult>(tool);
      if (!credit?.recorded)
        return say(`We could not add store credit: ${credit?.reason ?? "the request failed"}.`);
      const amount = formatMoney(credit.amountCents, credit.currency);
      return say(
        credit.by === "person"
          ? `Store credit of ${amount} has been approved for your account; a colleague will add it by hand and let you know when it is there.`
          : `Store credit of ${amount} has been queued for your account; it is being processed now.`,
      );
    }
  }
  const text = String(messages.findLast((m) => m.getType() === "human")?.content ?? "");
  const ref = text.match(ORDER_REF)?.[0]?.toUpperCase();
  if (!ref) return say("Please tell us your order number (it looks like ORD-1234) so we can look into it.");
  return call("lookup_order", { orderId: ref });
}

/**
 * A chat model that calls the order-support tools deterministically (it ignores the tools it is bound to). It takes
 * `thinkMsPerWord` per word of its answer (at least one word), as a real model takes time to write: runs last long
 * enough to be stopped or written to twice (OFFLINE_TOKEN_DELAY_MS, as the refund agent's offline model).
 */
export class OrderSupportOfflineModel extends BaseChatModel {
  private readonly thinkMsPerWord: number;

  constructor(fields: { thinkMsPerWord?: number } = {}) {
    super({});
    this.thinkMsPerWord = fields.thinkMsPerWord ?? 0;
  }

  static lc_name() {
    return "OrderSupportOfflineModel";
  }

  _llmType(): string {
    return "offline-order-support";
  }

  bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const message = answerFor(messages);
    const words = Math.max(1, String(message.content).split(/\s+/).filter(Boolean).length);
    if (this.thinkMsPerWord > 0) await think(words * this.thinkMsPerWord, options.signal);
    message.usage_metadata = estimatedUsage(messages, String(message.content));
    message.response_metadata = { ...message.response_metadata, estimated: true };
    return { generations: [{ text: String(message.content), message }] };
  }
}

/** Wait `ms`, or less when the run is stopped (the signal's reason is thrown, as LangChain's own calls do). */
function think(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
