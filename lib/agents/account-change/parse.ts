import { ACCOUNT_FIELDS } from "@/lib/contract/questions/contract";
import type { AccountChange } from "./state";

const FIELD_WORDS: [AccountChange["field"], RegExp][] = [
  ["payout", /\b(payout|iban|bank account|bank details|account number)\b/i],
  ["email", /\b(e-?mail)\b/i],
  ["address", /\b(address|moved|street|postcode|zip)\b/i],
];

/**
 * What the customer wants changed, read by rules (no model): the field from its words, the new value from what
 * follows the last " to " (or the whole message when there is none). Always returns a change: the reviewers see the
 * customer's own words and reject what makes no sense.
 */
export function parseAccountChange(message: string): AccountChange {
  const field = FIELD_WORDS.find(([, words]) => words.test(message))?.[0] ?? ACCOUNT_FIELDS[0];
  const at = message.toLowerCase().lastIndexOf(" to ");
  const raw = at >= 0 ? message.slice(at + 4) : message;
  const to =
    raw
      .trim()
      .replace(/[.!]+$/, "")
      .slice(0, 500) || message.trim().slice(0, 500);
  return { field, from: null, to };
}
