import { checkSpending } from "@/lib/runtime/runs/budget";
import "server-only";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { uuid5 } from "@langchain/langgraph-checkpoint";
import type { AppDb } from "@/lib/db/open";
import type { Order } from "@/lib/shop/schema";
import type { OrderSnapshot, RefundStateUpdate, RefundStateValue } from "../state";

/** What the nodes need from outside the graph. */
export interface NodeContext {
  db: AppDb;
  model: BaseChatModel;
  /**
   * Chaos testing only: pause this long inside execute_refund after the refund is recorded, so a kill test can stop
   * the process mid-node. 0 (the default) everywhere else.
   */
  refundNodeDelayMs?: number;
}

/** A node: a plain function over the state. */
export type RefundNode = (
  state: RefundStateValue,
  config: LangGraphRunnableConfig,
) => RefundStateUpdate | Promise<RefundStateUpdate>;

/** The thread a node runs in; business keys (refund, reply email) and stable ids derive from it. */
export function threadIdOf(config: LangGraphRunnableConfig): string {
  const threadId = config.configurable?.thread_id;
  if (typeof threadId !== "string" || threadId === "") {
    throw new Error("refund graph: config.configurable.thread_id is required");
  }
  return threadId;
}

// Fixed namespace for the graph's name-based (v5) ids.
const ID_NAMESPACE = "1a4a9065-5b0b-40e3-8b39-c9721b98ac1b";

/** A uuid derived from its parts: a node that re-runs with the same input produces the same ids. */
export function stableId(...parts: (string | number)[]): string {
  return uuid5(parts.join("|"), ID_NAMESPACE);
}

/** The order row as plain JSON for the state. */
export function toOrderSnapshot(row: Order): OrderSnapshot {
  return {
    id: row.id,
    customerName: row.customerName,
    customerEmail: row.customerEmail,
    amountCents: row.amountCents,
    currency: row.currency,
    placedAt: row.placedAt.toISOString(),
    paymentMethod: row.paymentMethod,
    items: row.items,
    status: row.status,
    flagged: row.flagged,
  };
}

/**
 * Call a chat model by streaming and return the whole answer. Streaming is what LangGraph's "messages" mode relays,
 * and it keeps `ChatOpenAI` off its non-streamed path, which estimates token counts with tiktoken encodings fetched
 * from the internet (a stall when the model is a local OpenAI-compatible server without internet access).
 */
export async function streamToMessage(
  model: BaseChatModel,
  messages: BaseMessage[],
  config: RunnableConfig,
): Promise<AIMessageChunk> {
  // The run's spending limits: a stream starts outside the node's context, so the node asks before it starts.
  checkSpending(config);
  let whole: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(messages, config)) whole = whole ? whole.concat(chunk) : chunk;
  return whole ?? new AIMessageChunk({ content: "" });
}
