import "server-only";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { AppDb } from "@/lib/db/open";
import { paidWithoutPerson } from "@/lib/delivery/kinds";
import { getOrder } from "@/lib/shop/orders";
import { recordRefund, sumRefundsForOrder } from "@/lib/shop/refunds";

/*
 * The order-support agent's tools. `lookup_order` only reads; `issue_store_credit` acts on the world and is reviewed
 * by a person before it runs (see graph.ts). What a tool returns is what the model — and so the customer — is told:
 * it states the recorded effect and its state, never more.
 */

/** Arguments of `issue_store_credit`: the bounds the edit form shows and the server checks. */
export const storeCreditArgs = z.strictObject({
  orderId: z.string().min(1).max(64).describe("The order the credit is for"),
  amountCents: z.number().int().min(100).max(20_000).describe("Cents, 1.00 to 200.00"),
  reason: z.string().trim().min(1).max(500).describe("Shown to the customer"),
});
export type StoreCreditArgs = z.infer<typeof storeCreditArgs>;

/** What `lookup_order` tells the model. */
export interface OrderFacts {
  found: boolean;
  orderId: string;
  customerName?: string;
  totalCents?: number;
  currency?: string;
  refundableCents?: number;
  status?: string;
}

/** What `issue_store_credit` tells the model: the recorded credit and its state, or why none was recorded. */
export type CreditResult =
  | {
      recorded: true;
      refundId: string;
      effectId: string;
      amountCents: number;
      currency: string;
      status: "queued";
      /**
       * Who adds it: the payment provider (queued for it now), or a person (the provider cannot: Stripe without the
       * customer on record). The customer is told which, never that a person's credit is being processed.
       */
      by: "provider" | "person";
    }
  | { recorded: false; reason: string };

export function orderSupportTools(db: AppDb) {
  const lookupOrder = tool(
    async ({ orderId }): Promise<string> => {
      const order = await getOrder({ db, orderId });
      if (!order) return JSON.stringify({ found: false, orderId } satisfies OrderFacts);
      const refunded = await sumRefundsForOrder({ db, orderId });
      return JSON.stringify({
        found: true,
        orderId,
        customerName: order.customerName,
        totalCents: order.amountCents,
        currency: order.currency,
        refundableCents: Math.max(0, order.amountCents - refunded),
        status: order.status,
      } satisfies OrderFacts);
    },
    {
      name: "lookup_order",
      description: "Look an order up by its number: customer, total, what is left to refund.",
      schema: z.object({ orderId: z.string().min(1).max(64) }),
    },
  );

  const issueStoreCredit = tool(
    async (args, config): Promise<string> => {
      const threadId = config.configurable?.thread_id;
      const callId = config.toolCall?.id;
      if (typeof threadId !== "string" || typeof callId !== "string") {
        throw new Error("issue_store_credit: called outside a thread's tool call");
      }
      const order = await getOrder({ db, orderId: args.orderId });
      if (!order)
        return JSON.stringify({ recorded: false, reason: `no order ${args.orderId}` } satisfies CreditResult);
      // Keyed by the reviewed tool call: a resumed, replayed or recovered step finds the same credit, never a second.
      // One store credit per order per thread, whatever call asks for it: a rollback or a fork that made the agent
      // forget a credit cannot grant it again.
      const recorded = await recordRefund({
        db,
        decisionRef: `${threadId}/tool:${callId}`,
        orderId: order.id,
        threadId,
        amountCents: args.amountCents,
        currency: order.currency,
        method: "store_credit",
        purpose: `store_credit:${threadId}:${order.id}`,
      });
      if (!recorded.ok) {
        return JSON.stringify({
          recorded: false,
          reason:
            recorded.reason === "duplicate"
              ? `store credit of ${recorded.duplicate.amountCents} cents for ${order.id} was already recorded on this thread (${recorded.duplicate.id}); no second credit was recorded`
              : `only ${recorded.refundableCents} cents of the order are left to refund`,
        } satisfies CreditResult);
      }
      if (!recorded.authorized) {
        return JSON.stringify({
          recorded: false,
          reason: `no reviewed decision authorized ${args.amountCents} cents for ${order.id}: nothing is paid; a person looks at it`,
        } satisfies CreditResult);
      }
      return JSON.stringify({
        recorded: true,
        refundId: recorded.refund.id,
        effectId: recorded.effect.id,
        amountCents: recorded.refund.amountCents,
        currency: recorded.refund.currency,
        status: "queued",
        by: (await paidWithoutPerson({ db, refund: { orderId: order.id, method: "store_credit" } }))
          ? "provider"
          : "person",
      } satisfies CreditResult);
    },
    {
      name: "issue_store_credit",
      description: "Give the customer store credit against an order (a person reviews it first).",
      schema: storeCreditArgs,
    },
  );
  return [lookupOrder, issueStoreCredit];
}
