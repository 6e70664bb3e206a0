/* An order as the new-ticket form offers it. Types only: the server lists them in lib/shop/orders-list.ts. */

/** An order as the new-ticket form offers it. */
export interface OrderChoice {
  id: string;
  customerName: string;
  amountCents: number;
  currency: string;
  /** ISO 8601. */
  placedAt: string;
  paymentMethod: string;
  status: string;
  flagged: boolean;
  /** Item names, e.g. "2 × Ceramic mug". */
  items: string[];
}
