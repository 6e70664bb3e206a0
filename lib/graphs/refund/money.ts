import "server-only";

/** Minor units → "€25.00" (English formatting, whatever the server's locale, so replies read the same everywhere). */
export function formatMoney(cents: number, currency: string): string {
  return new Intl.NumberFormat("en-IE", { style: "currency", currency }).format(cents / 100);
}
