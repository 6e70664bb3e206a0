import "server-only";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import {
  Annotation,
  type BaseCheckpointSaver,
  END,
  type LangGraphRunnableConfig,
  START,
  StateGraph,
} from "@langchain/langgraph";
import type { AppDb } from "@/lib/db/open";
import { getOrder } from "@/lib/db/queries/orders";
import { askHuman } from "@/lib/graphs/ask-human";
import type { GoodwillVoucherAnswer } from "@/lib/interrupts";

/** The example agent's state: the complaint, the customer, the voucher proposed and what a person decided. */
export const GoodwillState = Annotation.Root({
  messages: Annotation<(HumanMessage | AIMessage)[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  complaint: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
  orderRef: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
  customer: Annotation<{ name: string; email: string }>({
    reducer: (_a, b) => b,
    default: () => ({ name: "Customer", email: "" }),
  }),
  voucherCents: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
  decision: Annotation<GoodwillVoucherAnswer | null>({ reducer: (_a, b) => b, default: () => null }),
});
type State = typeof GoodwillState.State;

/**
 * propose (10 % of the order, at least €5, at most €50) → ask (a person grants or declines) → reply. Nodes are plain
 * functions over the state; `ask` calls `askHuman` first thing, because LangGraph re-runs a node on resume.
 */
export function buildGoodwillGraph({ checkpointer, db }: { checkpointer: BaseCheckpointSaver; db: AppDb }) {
  return new StateGraph(GoodwillState)
    .addNode("propose", async (s: State) => {
      const order = s.orderRef ? await getOrder({ db, orderId: s.orderRef }) : undefined;
      const cents = Math.min(5000, Math.max(500, Math.round((order?.amountCents ?? 0) / 10)));
      return {
        voucherCents: cents,
        ...(order ? { customer: { name: order.customerName, email: order.customerEmail } } : {}),
      };
    })
    .addNode("ask", (s: State) => ({
      decision: askHuman<"goodwill_voucher">({
        action: "goodwill_voucher",
        title: `Goodwill voucher for ${s.customer.name}`,
        customer: s.customer,
        voucher: { amountCents: s.voucherCents, currency: "EUR" },
        complaint: s.complaint,
      }),
    }))
    .addNode("reply", (s: State, config: LangGraphRunnableConfig) => ({
      messages: [
        new AIMessage({
          // A stable id: a replayed step writes the same message, and AG-UI needs every message to have one.
          id: `goodwill-reply-${String(config.configurable?.thread_id)}`,
          content:
            s.decision?.decision === "grant"
              ? `We are sorry, ${s.customer.name}. A voucher is on its way to you.`
              : `We are sorry, ${s.customer.name}. We have noted your feedback.`,
        }),
      ],
    }))
    .addEdge(START, "propose")
    .addEdge("propose", "ask")
    .addEdge("ask", "reply")
    .addEdge("reply", END)
    .compile({ checkpointer, name: "goodwill" });
}

/** A customer message starting a goodwill thread. */
export function goodwillInput(message: { messageId: string; text: string; orderRef: string | null }) {
  return {
    messages: [new HumanMessage({ id: message.messageId, content: message.text })],
    complaint: message.text,
    orderRef: message.orderRef,
  };
}
