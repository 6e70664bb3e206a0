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
import { askHuman, decisionRef } from "@/lib/agents/kit/ask-human";
import type { GoodwillVoucherAnswer } from "@/lib/contract/questions";
import { formatMoney } from "@/lib/contract/wire";
import type { AppDb } from "@/lib/db/open";
import { getOrder } from "@/lib/shop/orders";
import { issueVoucher } from "@/lib/shop/vouchers";

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
 * propose (10 % of the order, at least €5, at most €50) → ask (a person grants or declines) → reply (a granted voucher
 * is issued there, with the email carrying its code, once per decision). Nodes are plain
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
    .addNode("reply", async (s: State, config: LangGraphRunnableConfig) => {
      // A stable id: a replayed step writes the same message, and AG-UI needs every message to have one.
      const id = `goodwill-reply-${String(config.configurable?.thread_id)}`;
      if (s.decision?.decision !== "grant") {
        return {
          messages: [
            new AIMessage({ id, content: `We are sorry, ${s.customer.name}. We have noted your feedback.` }),
          ],
        };
      }
      // The voucher is issued here, once per granting decision (this step's own reference), and the email with its
      // code is queued in the same transaction; the reply says exactly that, from what was recorded.
      const operator = config.configurable?.operator_id;
      const amount = formatMoney(s.voucherCents, "EUR");
      const { voucher, mail } = await issueVoucher({
        db,
        decisionRef: decisionRef(config),
        threadId: String(config.configurable?.thread_id),
        amountCents: s.voucherCents,
        currency: "EUR",
        grantedBy: typeof operator === "string" && operator !== "" ? operator : "operator",
        email: s.customer.email
          ? {
              to: s.customer.email,
              subject: "Your goodwill voucher",
              body: (code) =>
                `Dear ${s.customer.name},\n\nWe are sorry for the trouble. Here is a voucher worth ${amount}: ` +
                `enter the code ${code} at checkout.\n\nYour customer service team`,
            }
          : null,
      });
      const content = mail
        ? `We are sorry, ${s.customer.name}. We have issued you a voucher worth ${amount} (code ${voucher.code}); an email with the code is queued for ${s.customer.email}.`
        : `We are sorry, ${s.customer.name}. We have issued you a voucher worth ${amount} (code ${voucher.code}).`;
      return { messages: [new AIMessage({ id, content })] };
    })
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
