import "server-only";
import { createHash } from "node:crypto";
import type { Authorization } from "@/lib/contract/wire";
import { receiptHmac, receiptKeys } from "@/lib/platform/receipt-keys";

/*
 * What a decision authorizes, as the ledger stores and compares it (lib/runtime/runs/receipts.ts signs it): an order and an
 * amount, an account by its id and a new value by a keyed digest (no personal data), a voucher's amount.
 */

export type { Authorization };

/** A customer account's id: derived from the email the shop's orders know them by (one account per customer). */
export function accountIdOf(email: string): string {
  return `acct_${createHash("sha256").update(email.trim().toLowerCase()).digest("hex").slice(0, 24)}`;
}

/** The stored terms of an authorization (digests instead of personal values). */
export function termsOf(a: Authorization): { effect: string; terms: Record<string, unknown> } {
  switch (a.effect) {
    case "refund":
      return { effect: a.effect, terms: { orderId: a.orderId, amountCents: a.amountCents } };
    case "voucher":
      return { effect: a.effect, terms: { amountCents: a.amountCents, currency: a.currency } };
    case "account_change": {
      const kid = receiptKeys().signing.id;
      return {
        effect: a.effect,
        terms: { accountId: accountIdOf(a.accountEmail), field: a.field, to: valueDigest(a.to, kid), kid },
      };
    }
  }
}

/** Whether stored terms authorize exactly this effect (a value's digest recomputed under the key it was made with). */
export function termsMatch(effect: string, terms: Record<string, unknown>, wanted: Authorization): boolean {
  if (effect !== wanted.effect) return false;
  switch (wanted.effect) {
    case "refund":
      return terms.orderId === wanted.orderId && terms.amountCents === wanted.amountCents;
    case "voucher":
      return terms.amountCents === wanted.amountCents && terms.currency === wanted.currency;
    case "account_change":
      return (
        terms.accountId === accountIdOf(wanted.accountEmail) &&
        terms.field === wanted.field &&
        typeof terms.kid === "string" &&
        terms.to === valueDigest(wanted.to, terms.kid)
      );
  }
}

function valueDigest(value: string, kid: string): string {
  const digest = receiptHmac(`value:${value.trim()}`, kid);
  if (digest === null) return "unknown-key";
  return digest;
}
