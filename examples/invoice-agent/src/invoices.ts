/*
 * The invoices this example knows: a stand-in for the team's billing system (read only). A real package would read its
 * own service or its own tables (see the README: where an agent's tables and migrations go).
 */
export interface Invoice {
  id: string;
  customerName: string;
  totalCents: number;
  currency: string;
  /** The charge the customer disputes most often on it (what the agent proposes to credit). */
  disputedCents: number;
  disputedLine: string;
}

export const INVOICES: readonly Invoice[] = [
  {
    id: "INV-2001",
    customerName: "Hana Kato",
    totalCents: 48_000,
    currency: "EUR",
    disputedCents: 24_000,
    disputedLine: "Consulting day charged twice",
  },
  {
    id: "INV-2002",
    customerName: "Olu Adeyemi",
    totalCents: 9_900,
    currency: "EUR",
    disputedCents: 1_900,
    disputedLine: "Late fee",
  },
];

export function findInvoice(id: string): Invoice | null {
  return INVOICES.find((i) => i.id === id.toUpperCase()) ?? null;
}

/** The first invoice number a text names (`INV-2001`, any letter case). */
export function invoiceRefIn(text: string): string | null {
  return /\bINV-\d{4}\b/i.exec(text)?.[0]?.toUpperCase() ?? null;
}
