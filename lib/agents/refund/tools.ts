import "server-only";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { AppDb } from "@/lib/db/open";
import { getOrder } from "@/lib/shop/orders";
import { ORDER_REF_PATTERN } from "./classify-rules";
import { toOrderSnapshot } from "./nodes/context";
import type { OrderSnapshot } from "./state";

/** The name of the order lookup tool, as it appears in the tool call messages. */
export const LOOKUP_ORDER_TOOL = "lookup_order";

/** What the lookup tells the agent: the order as the policy reads it, or that there is none. */
export type LookupResult = { found: true; order: OrderSnapshot } | { found: false; orderId: string };

/**
 * The refund agent's order lookup, a LangChain tool: the order is something the agent looks up when the ticket or the
 * message names one, not a field every ticket carries. It only reads.
 */
export function lookupOrderTool({ db }: { db: AppDb }) {
  return tool(
    async ({ orderId }): Promise<string> => {
      const row = await getOrder({ db, orderId });
      const result: LookupResult = row
        ? { found: true, order: toOrderSnapshot(row) }
        : { found: false, orderId };
      return JSON.stringify(result);
    },
    {
      name: LOOKUP_ORDER_TOOL,
      description: "Look an order up by its number: its customer, amount, payment, status and age.",
      schema: z.object({ orderId: z.string().regex(new RegExp(`^${ORDER_REF_PATTERN}$`)) }),
    },
  );
}
