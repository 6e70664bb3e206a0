/** "120", "120.5", "120.50" or "120,50" → cents; anything else (signs, thousands separators, 3 decimals) → null. */
export function parseAmountToCents(text: string): number | null {
  const t = text.trim().replace(",", ".");
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(t);
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"));
}
