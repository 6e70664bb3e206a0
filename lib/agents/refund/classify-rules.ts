import "server-only";

/** What the classifier extracts from a customer's message. */
export interface Classification {
  intent: "refund" | "other";
  reason: string;
  /** `ORD-1234` (upper case) or null. */
  orderRef: string | null;
  /** Requested amount in minor units, or null when the message names none. */
  requestedCents: number | null;
}

export {
  extractOrderRef,
  normalizeOrderRef,
  ORDER_REF_PATTERN,
  orderRefsIn,
} from "@/lib/agents/kit/order-ref";

import { extractOrderRef, ORDER_REF_ALL } from "@/lib/agents/kit/order-ref";

// A number with optional thousands separators and up to two decimals: 25 · 25.50 · 25,50 · 1,299 · 1.299,00
const NUMBER = String.raw`\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`;
const CURRENCY_BEFORE = new RegExp(String.raw`(?:€|\beur\b|\beuros?\b)\s*(${NUMBER})`, "i");
const CURRENCY_AFTER = new RegExp(String.raw`(${NUMBER})\s*(?:€|\beur\b|\beuros?\b)`, "i");
// Without a currency only a decimal amount counts ("25.50"): bare integers are quantities, days or dates.
const BARE_DECIMAL = /(?<![\w.,-])(\d+[.,]\d{2})(?![\w.,])/;

/**
 * The amount a message asks for, in cents: "€25", "25 EUR", "25.50", "€1,299.00". Order numbers are removed first
 * so `ORD-1003` is never read as 1003.
 */
export function parseRequestedCents(text: string): number | null {
  const cleaned = text.replace(ORDER_REF_ALL, " ");
  const match =
    cleaned.match(CURRENCY_BEFORE)?.[1] ??
    cleaned.match(CURRENCY_AFTER)?.[1] ??
    cleaned.match(BARE_DECIMAL)?.[1];
  return match === undefined ? null : toCents(match);
}

/** "1,299.00" → 129900, "25,50" → 2550, "1.299" → 129900: a separator followed by exactly three digits groups. */
function toCents(raw: string): number | null {
  const decimal = raw.match(/[.,](\d{1,2})$/);
  const whole = (decimal ? raw.slice(0, -decimal[0].length) : raw).replace(/[.,]/g, "");
  const cents = Number(whole) * 100 + (decimal ? Number(decimal[1]!.padEnd(2, "0")) : 0);
  return Number.isSafeInteger(cents) && cents > 0 ? cents : null;
}

const REFUND_WORDS =
  /\b(refund\w*|money back|reimburs\w*|charge ?back|pay (me )?back|return (it|them|this|the|my)|compensat\w*)\b/i;

/** Reasons the offline classifier recognizes; the first match wins. */
const REASONS: [RegExp, string][] = [
  [/\b(damaged|broken on arrival|arrived broken|smashed|cracked|dented)\b/i, "item arrived damaged"],
  [/\b(wrong (item|size|colou?r|product)|not what i ordered|sent me the wrong)\b/i, "wrong item delivered"],
  [
    /\b(never (arrived|came|received)|not (arrived|received)|didn'?t (arrive|receive)|lost)\b/i,
    "order not received",
  ],
  [/\b(stopped working|defective|faulty|doesn'?t work|does not work|broke|broken)\b/i, "item is defective"],
  [/\b(too (small|big|large|tight)|doesn'?t fit|does not fit)\b/i, "item does not fit"],
  [/\b(late|delayed|took too long)\b/i, "delivery was late"],
  [/\b(changed my mind|no longer (need|want)|don'?t (need|want) it)\b/i, "customer changed their mind"],
  [/\b(charged twice|double charged|overcharged)\b/i, "billing error"],
];

/** A short reason: a recognized category, or the message's first sentence. */
export function detectReason(text: string): string {
  for (const [pattern, reason] of REASONS) if (pattern.test(text)) return reason;
  const first = text.trim().split(/(?<=[.!?])\s/)[0] ?? "";
  return first.length > 160 ? `${first.slice(0, 157)}...` : first || "no reason given";
}

/**
 * Deterministic classification: the offline model's answer, and the fallback when a real model's JSON is unusable.
 * A message that names an amount and an order is a refund request even without the word "refund".
 */
export function classifyByRules(text: string): Classification {
  const orderRef = extractOrderRef(text);
  const requestedCents = parseRequestedCents(text);
  const refund = REFUND_WORDS.test(text) || (orderRef !== null && requestedCents !== null);
  return { intent: refund ? "refund" : "other", reason: detectReason(text), orderRef, requestedCents };
}
