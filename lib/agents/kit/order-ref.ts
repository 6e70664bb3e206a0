/*
 * The shop's order numbers (`ORD-1234`) as the agents read them from what people write: any agent that takes an order
 * number uses these, so they are the kit's.
 */

/**
 * The order number format, shared with the `input_text` question that asks for it: any letter case, since the graph
 * upper-cases what the operator types.
 */
export const ORDER_REF_PATTERN = "[Oo][Rr][Dd]-\\d{4}";

const ORDER_REF = /\bORD-\d{4}\b/i;
/** Every order reference in a text (global: use with `matchAll` or `replace`). */
export const ORDER_REF_ALL = /\bORD-\d{4}\b/gi;

/** The first order reference in `text`, normalized to upper case. */
export function extractOrderRef(text: string): string | null {
  return normalizeOrderRef(text.match(ORDER_REF)?.[0] ?? null);
}

/** Every order reference in `text`, normalized to upper case. */
export function orderRefsIn(text: string): string[] {
  return [...text.matchAll(ORDER_REF_ALL)].map((m) => m[0].toUpperCase());
}

/** `ord-1003` → `ORD-1003`; anything that is not exactly an order reference → null. */
export function normalizeOrderRef(value: string | null | undefined): string | null {
  const trimmed = value?.trim().toUpperCase() ?? "";
  return new RegExp(`^${ORDER_REF_PATTERN}$`).test(trimmed) ? trimmed : null;
}
