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

const ORDER_REFS = /\bORD-\d{3,}\b/gi;

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

/** The tool results since the model's last answer (one per call of its last batch that ran or was refused). */
function latestResults(messages: BaseMessage[]): ToolMessage[] {
  const results: ToolMessage[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as BaseMessage;
    if (!(m instanceof ToolMessage) && m.getType() !== "tool") break;
    results.unshift(m as ToolMessage);
  }
  return results;
}

/** The order a credit call was about, read from the call the result answers. */
function creditOrderOf(messages: BaseMessage[], result: ToolMessage): string | null {
  for (const m of messages) {
    const calls = (m as AIMessage).tool_calls ?? [];
    const call = calls.find((c) => c.id === result.tool_call_id);
    if (call) return typeof call.args.orderId === "string" ? call.args.orderId : null;
  }
  return null;
}

/** Several orders in one message: their lookups, credits and refusals, read back from the whole conversation. */
function severalOrders(
  messages: BaseMessage[],
  latest: ToolMessage[],
  reply: (calls: Call[]) => AIMessage,
): AIMessage | string {
  const orders = messages
    .filter((m): m is ToolMessage => m.getType() === "tool" && (m as ToolMessage).name === "lookup_order")
    .map((m) => parse<OrderFacts>(m))
    .filter((o): o is OrderFacts => o !== null);
  const credits = messages.filter(
    (m): m is ToolMessage => m.getType() === "tool" && (m as ToolMessage).name === "issue_store_credit",
  );
  const recorded = new Map<string, CreditResult & { recorded: true }>();
  const refused = new Set<string>();
  for (const c of credits) {
    const order = creditOrderOf(messages, c);
    if (!order) continue;
    if (c.status === "error") refused.add(order);
    else {
      const credit = parse<CreditResult>(c);
      if (credit?.recorded) recorded.set(order, credit);
      else refused.add(order);
    }
  }
  const open = orders.filter(
    (o) => o.found && proposedCreditCents(o) > 0 && !recorded.has(o.orderId) && !refused.has(o.orderId),
  );
  // The first proposal, and again after LangChain sent a batch back for a refusal: the credits nobody refused yet,
  // in one batch (a person reviews them together).
  const sentBack = latest.some((r) => r.name === "issue_store_credit" && r.status === "error");
  if (open.length > 0 && (latest.every((r) => r.name === "lookup_order") || sentBack))
    return reply(
      open.map((o) => ({
        name: "issue_store_credit",
        args: {
          orderId: o.orderId,
          amountCents: proposedCreditCents(o),
          reason: "Sorry for the trouble with your order",
        },
      })),
    );
  const lines = orders.map((o) => {
    const credit = recorded.get(o.orderId);
    if (credit)
      return credit.by === "person"
        ? `Store credit of ${formatMoney(credit.amountCents, credit.currency)} for ${o.orderId} has been approved; a colleague will add it by hand.`
        : `Store credit of ${formatMoney(credit.amountCents, credit.currency)} for ${o.orderId} has been queued; it is being processed now.`;
    if (!o.found) return `We could not find the order ${o.orderId}.`;
    if (refused.has(o.orderId)) return `We will not add store credit for ${o.orderId} this time.`;
    return `Order ${o.orderId} has been refunded in full already, so no store credit can be added.`;
  });
  return lines.join(" ");
}

interface Call {
  name: string;
  args: Record<string, unknown>;
}

export function answerFor(messages: BaseMessage[]): AIMessage {
  const last = messages.at(-1);
  // A stable id per turn: a replayed step writes the same message.
  const id = `order-support-${messages.length}`;
  const calls = (list: Call[]) =>
    new AIMessage({
      id,
      content: "",
      tool_calls: list.map(({ name, args }, i) => ({
        id: list.length === 1 ? `call_${name}_${messages.length}` : `call_${name}_${messages.length}_${i}`,
        name,
        args,
        type: "tool_call" as const,
      })),
    });
  const call = (name: string, args: Record<string, unknown>) => calls([{ name, args }]);
  const say = (content: string) => new AIMessage({ id, content });

  const text = String(messages.findLast((m) => m.getType() === "human")?.content ?? "");
  const refs = [...new Set([...text.matchAll(ORDER_REFS)].map((m) => m[0].toUpperCase()))];
  // A message about several orders: each looked up, their credits proposed in one batch a person reviews together.
  if (refs.length > 1) {
    const latest = latestResults(messages);
    if (latest.length === 0)
      return calls(refs.map((orderId) => ({ name: "lookup_order", args: { orderId } })));
    const next = severalOrders(messages, latest, calls);
    return typeof next === "string" ? say(next) : next;
  }

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
  const ref = refs[0];
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
