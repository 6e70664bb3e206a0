const WORDS: Record<string, string> = {
  paypal: "PayPal",
  card: "Card",
  bank_transfer: "Bank transfer",
  gift_card: "Gift card",
  original_payment: "Original payment method",
  store_credit: "Store credit",
  sender_is_customer: "The sender is the order's customer",
  sender_unknown: "Sender not confirmed",
  replied: "Replied to the customer",
  no_reply_needed: "No reply needed",
};

/** `bank_transfer` → "Bank transfer", `write_reply` → "Write reply" (known words keep their usual spelling). */
export function humanize(value: string): string {
  const known = WORDS[value];
  if (known) return known;
  const words = value.replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Who decided, as people read it: a system principal (`system:timer`) by what it is, anyone else by their label. */
export function principalLabel(by: string): string {
  if (by === "system:timer") return "Timer (automatic)";
  if (by === "system:expiry") return "Deadline (automatic)";
  if (by.startsWith("system:")) return `${humanize(by.slice("system:".length))} (automatic)`;
  return by;
}
