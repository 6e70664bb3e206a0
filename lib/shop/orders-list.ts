import "server-only";
import { asc } from "drizzle-orm";
import type { OrderChoice } from "@/lib/contract/views/orders";
import type { Queryable } from "../db/tx";
import { openOrders } from "./orders";
import { orders } from "./schema";

/** The order's shape is the browser's (lib/contract/views/orders.ts). */
export type { OrderChoice };

/** Every order, by id (the demo shop has a dozen; a real shop would search instead). */
export async function listOrders({
  db,
  limit = 200,
}: {
  db: Queryable;
  limit?: number;
}): Promise<OrderChoice[]> {
  const rows = await openOrders(db, await db.select().from(orders).orderBy(asc(orders.id)).limit(limit));
  return rows.map((o) => ({
    id: o.id,
    customerName: o.customerName,
    amountCents: o.amountCents,
    currency: o.currency,
    placedAt: o.placedAt.toISOString(),
    paymentMethod: o.paymentMethod,
    status: o.status,
    flagged: o.flagged,
    items: o.items.map((i) => (i.quantity > 1 ? `${i.quantity} × ${i.name}` : i.name)),
  }));
}
