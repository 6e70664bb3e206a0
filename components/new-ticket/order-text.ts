import type { OrderChoice } from "@/lib/contract/views/orders";
import { formatMoney } from "@/lib/contract/wire";

const PAYMENT: Record<string, string> = {
  card: "card",
  paypal: "PayPal",
  bank_transfer: "bank transfer",
  gift_card: "gift card",
};

/** "ORD-1002 · Lars Jensen · Wireless headphones · €249.00" */
export function orderLabel(o: OrderChoice): string {
  return `${o.id} · ${o.customerName} · ${o.items.join(", ")} · ${formatMoney(o.amountCents, o.currency)}`;
}

/** The facts the refund policy looks at, in words. `now` is passed so server and client agree. */
export function orderFacts(o: OrderChoice, now: number): string {
  const days = Math.floor((now - Date.parse(o.placedAt)) / 86_400_000);
  const facts = [
    `placed ${days} ${days === 1 ? "day" : "days"} ago`,
    `paid by ${PAYMENT[o.paymentMethod] ?? o.paymentMethod}`,
    o.status,
  ];
  if (o.flagged) facts.push("flagged by fraud screening");
  return facts.join(" · ");
}

/** A customer message to start from, so a demo needs no typing. */
export function sampleMessage(o: OrderChoice | undefined): string {
  if (!o) return "Hello, something I bought arrived broken. Can I get a refund?";
  return `Hi, the ${(o.items[0] ?? "item").replace(/^\d+ × /, "").toLowerCase()} from order ${o.id} arrived damaged. I'd like a refund, please.`;
}
