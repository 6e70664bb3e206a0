import "server-only";
import { eq } from "drizzle-orm";
import type { Queryable } from "../db/tx";
import { type NewOrder, type Order, orders } from "./schema";

/** One order by id (`ORD-1234`), or undefined. */
export async function getOrder({
  db,
  orderId,
}: {
  db: Queryable;
  orderId: string;
}): Promise<Order | undefined> {
  const [row] = await db.select().from(orders).where(eq(orders.id, orderId));
  return row;
}

/** Insert orders that do not exist yet; existing ids are left untouched. Returns how many were inserted. */
export async function insertOrdersIfMissing({
  db,
  rows,
}: {
  db: Queryable;
  rows: NewOrder[];
}): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await db
    .insert(orders)
    .values(rows)
    .onConflictDoNothing({ target: orders.id })
    .returning({ id: orders.id });
  return inserted.length;
}

/** The provider's reference of an order's payment (what a refund is made against), or null when none is on record. */
export async function orderPaymentRef({
  db,
  orderId,
}: {
  db: Queryable;
  orderId: string;
}): Promise<string | null> {
  const [row] = await db.select({ ref: orders.paymentRef }).from(orders).where(eq(orders.id, orderId));
  return row?.ref ?? null;
}
