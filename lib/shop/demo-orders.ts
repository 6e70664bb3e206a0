import "server-only";
import type { Queryable } from "../db/tx";
import { insertOrdersIfMissing } from "./orders";
import type { NewOrder } from "./schema";

/** A demo order; `daysAgo` becomes `placedAt` at seed time, so the 30-day rule behaves the same on any date. */
export interface DemoOrder {
  id: string;
  customerName: string;
  customerEmail: string;
  daysAgo: number;
  paymentMethod: "card" | "paypal" | "bank_transfer" | "gift_card";
  status: "delivered" | "shipped" | "processing" | "cancelled";
  flagged: boolean;
  items: { sku: string; name: string; quantity: number; unitCents: number }[];
}

const item = (sku: string, name: string, unitCents: number, quantity = 1) => ({
  sku,
  name,
  quantity,
  unitCents,
});

/** One demo order; the email is derived from the name ("Chloé Martin" → chloe.martin@example.com). */
function demo(
  id: string,
  customerName: string,
  daysAgo: number,
  paymentMethod: DemoOrder["paymentMethod"],
  status: DemoOrder["status"],
  items: DemoOrder["items"],
  flagged = false,
): DemoOrder {
  const local = customerName
    .normalize("NFD")
    .replace(/[^A-Za-z ]/g, "")
    .toLowerCase()
    .replace(/ /g, ".");
  return {
    id,
    customerName,
    customerEmail: `${local}@example.com`,
    daysAgo,
    paymentMethod,
    status,
    items,
    flagged,
  };
}

/** The demo shop. Each line says which path of the refund agent the order exercises. */
export const DEMO_ORDERS: DemoOrder[] = [
  // €24.99, recent, card → auto-approve (the policy decides), then confirm_email
  demo("ORD-1001", "Anna Schmidt", 5, "card", "delivered", [item("MUG-01", "Ceramic mug", 1249, 2)]),
  // €249.00 → over_auto_limit: refund_approval (approve / reject / approve_partial)
  demo("ORD-1002", "Lars Jensen", 10, "card", "delivered", [item("HP-200", "Wireless headphones", 24900)]),
  // €39.90, PayPal → auto-approve; the answer in the "which order?" (input_text) demo
  demo("ORD-1003", "Sofia Rossi", 8, "paypal", "delivered", [item("TS-11", "Linen T-shirt", 1995, 2)]),
  // €89.00, bank transfer → refund_approval, then select_option (original payment or store credit)
  demo("ORD-1004", "Tom Becker", 12, "bank_transfer", "delivered", [item("BAG-07", "Canvas backpack", 8900)]),
  // €19.50, gift card → auto-approve, then select_option
  demo("ORD-1005", "Mia Novak", 3, "gift_card", "delivered", [item("BK-33", "Paperback novel", 975, 2)]),
  // €45.00, placed 45 days ago → late_request
  demo("ORD-1006", "Jonas Meyer", 45, "card", "delivered", [item("LMP-02", "Desk lamp", 4500)]),
  // €35.00, flagged by fraud screening → flagged_order
  demo("ORD-1007", "Chloé Martin", 6, "card", "delivered", [item("SC-05", "Wool scarf", 3500)], true),
  // €1,299.00 → over_auto_limit, the partial refund demo
  demo("ORD-1008", "Ahmed Karimi", 14, "card", "delivered", [item("LT-14", "14-inch laptop", 129900)]),
  // €12.00, still on its way → not_delivered
  demo("ORD-1009", "Emma Wilson", 2, "paypal", "shipped", [item("SK-09", "Cotton socks", 400, 3)]),
  // €59.00, 60 days ago → over_auto_limit + late_request (several findings at once)
  demo("ORD-1010", "Lucas Dubois", 60, "paypal", "delivered", [item("SH-41", "Running shoes", 5900)]),
  // €149.00, bank transfer, flagged → over_auto_limit + flagged_order, then select_option if approved
  demo(
    "ORD-1011",
    "Nora Berg",
    20,
    "bank_transfer",
    "delivered",
    [item("JK-22", "Rain jacket", 14900)],
    true,
  ),
  // €28.00, cancelled → not_delivered
  demo("ORD-1012", "Pablo García", 4, "card", "cancelled", [item("PL-03", "Plant pot", 1400, 2)]),
];

const DAY_MS = 24 * 60 * 60 * 1000;

/** The demo orders as rows, dated relative to `now`; the total is the sum of the items. */
export function demoOrderRows(now: Date = new Date()): NewOrder[] {
  return DEMO_ORDERS.map(({ daysAgo, items, ...order }) => ({
    ...order,
    items,
    currency: "EUR",
    amountCents: items.reduce((total, i) => total + i.quantity * i.unitCents, 0),
    placedAt: new Date(now.getTime() - daysAgo * DAY_MS),
  }));
}

/**
 * Insert the demo orders that are missing. Safe on every start: existing orders (and their dates) are kept, so a
 * refund recorded against one keeps pointing at the same row.
 */
export async function seedDemoOrders({
  db,
  now,
}: {
  db: Queryable;
  now?: Date;
}): Promise<{ inserted: number }> {
  return { inserted: await insertOrdersIfMissing({ db, rows: demoOrderRows(now) }) };
}
