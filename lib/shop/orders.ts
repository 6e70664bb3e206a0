import "server-only";
import { desc, eq, inArray } from "drizzle-orm";
import { threads } from "../db/schema";
import { ticketTerms } from "../db/search-terms";
import type { Queryable } from "../db/tx";
import { customerSubjectId, type KeySource, recordSealer, subjectOpener } from "../db/vault";
import { type NewOrder, type Order, orderNames, orders } from "./schema";

/*
 * The shop's orders. An order's customer (name and email) is stored sealed under the customer's key (their subject, a
 * blind index of the email: lib/db/vault.ts), the name's words as a blind index for search (`order_names`); ids,
 * amounts, items and statuses stay plain. Every read here opens them: callers see the name and the email, or
 * `[erased]` once the customer was erased.
 */

/** Orders as stored, with their customer's name and email opened (one key lookup for all of them). */
export async function openOrders<T extends Pick<Order, "customerName" | "customerEmail" | "subjectId">>(
  db: KeySource,
  rows: readonly T[],
): Promise<T[]> {
  const open = await subjectOpener(
    db,
    rows.map((r) => r.subjectId),
  );
  return rows.map((row) => ({
    ...row,
    customerName: open(row.subjectId, row.customerName),
    customerEmail: open(row.subjectId, row.customerEmail),
  }));
}

/** One order by id (`ORD-1234`), or undefined. */
export async function getOrder({
  db,
  orderId,
}: {
  db: Queryable;
  orderId: string;
}): Promise<Order | undefined> {
  const [row] = await db.select().from(orders).where(eq(orders.id, orderId));
  return row ? (await openOrders(db, [row]))[0] : undefined;
}

/**
 * Insert orders that do not exist yet; existing ids are left untouched. Returns how many were inserted. Each is filed
 * under its customer (their key made on first sight) and sealed, with its name's words indexed — in clear, without
 * the index, while an instance of a release that cannot read sealed records serves (the sealing job seals it later).
 */
export async function insertOrdersIfMissing({
  db,
  rows,
}: {
  db: Queryable;
  rows: NewOrder[];
}): Promise<number> {
  if (rows.length === 0) return 0;
  const stored: NewOrder[] = [];
  const names = new Map<string, string[]>();
  for (const row of rows) {
    const subjectId = customerSubjectId(row.customerEmail);
    const sealer = await recordSealer(db, subjectId);
    stored.push(
      sealer
        ? {
            ...row,
            subjectId,
            customerName: sealer.text(row.customerName),
            customerEmail: sealer.text(row.customerEmail),
          }
        : { ...row, subjectId },
    );
    if (sealer) names.set(row.id, ticketTerms(row.customerName));
  }
  const inserted = await db
    .insert(orders)
    .values(stored)
    .onConflictDoNothing({ target: orders.id })
    .returning({ id: orders.id });
  const indexed = inserted.flatMap(({ id }) => {
    const terms = names.get(id);
    return terms ? [{ orderId: id, terms }] : [];
  });
  if (indexed.length > 0) await db.insert(orderNames).values(indexed).onConflictDoNothing();
  return inserted.length;
}

/** The provider's reference of an order's payment (what a refund is made against), or null when none is on record. */
/** The order's customer at Stripe (`cus_…`), whom store credit goes to; null when the shop did not say. */
export async function orderStripeCustomer({
  db,
  orderId,
}: {
  db: Queryable;
  orderId: string;
}): Promise<string | null> {
  const [row] = await db
    .select({ customer: orders.stripeCustomer })
    .from(orders)
    .where(eq(orders.id, orderId));
  return row?.customer ?? null;
}

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

/** The order a provider payment (`pi_…` or `ch_…`) was made for, and the newest thread about that order. */
export async function orderOfPayment({
  db,
  refs,
}: {
  db: Queryable;
  refs: string[];
}): Promise<{ orderId: string; threadId: string | null } | null> {
  const wanted = refs.filter(Boolean);
  if (wanted.length === 0) return null;
  const [order] = await db
    .select({ id: orders.id })
    .from(orders)
    .where(inArray(orders.paymentRef, wanted))
    .limit(1);
  if (!order) return null;
  const [thread] = await db
    .select({ id: threads.id })
    .from(threads)
    .where(eq(threads.customerOrder, order.id))
    .orderBy(desc(threads.createdAt))
    .limit(1);
  return { orderId: order.id, threadId: thread?.id ?? null };
}
