import "server-only";
import { asc } from "drizzle-orm";
import type { Queryable } from "../db/tx";
import { orders } from "./schema";

/** An order as the new-ticket form offers it. */
export interface OrderChoice {
  id: string;
  customerName: string;
  amountCents: number;
  currency: string;
  /** ISO 8601. */
  placedAt: string;
  paymentMethod: string;
  status: string;
  flagged: boolean;
  /** Item names, e.g. "2 × Ceramic mug". */
  items: string[];
}

/** Every order, by id (the demo shop has a dozen; a real shop would search instead). */
export async function listOrders({
  db,
  limit = 200,
}: {
  db: Queryable;
  limit?: number;
}): Promise<OrderChoice[]> {
  const rows = await db.select().from(orders).orderBy(asc(orders.id)).limit(limit);
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
