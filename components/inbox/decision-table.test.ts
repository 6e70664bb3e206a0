import fc from "fast-check";
import type { InboxDecisionItem } from "@/lib/contract/inbox";
import { filledColumns } from "./decision-table";

/* The inbox shows an agent's subject columns (customer, order, amount) only when a row on the page fills them. */

const item = (fields: { customerName?: string; orderId?: string; orderRef?: string; amountCents?: number }) =>
  ({
    kind: "decision",
    decision: {
      customerName: fields.customerName ?? null,
      orderId: fields.orderId ?? null,
      amountCents: fields.amountCents ?? null,
    },
    thread: { orderRef: fields.orderRef ?? null },
  }) as unknown as InboxDecisionItem;

describe("the inbox's subject columns", () => {
  it("an agent without orders, customers or amounts (an account change's review) shows none of them", () => {
    expect([...filledColumns([item({}), item({})])]).toEqual([]);
  });

  it("a column is shown exactly when some row fills it", () => {
    const row = fc.record(
      {
        customerName: fc.string({ minLength: 1 }),
        orderId: fc.string({ minLength: 1 }),
        orderRef: fc.string({ minLength: 1 }),
        amountCents: fc.integer({ min: 0 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(row, { maxLength: 6 }), (rows) => {
        const filled = filledColumns(rows.map(item));
        expect(filled.has("customer")).toBe(rows.some((r) => r.customerName));
        expect(filled.has("order")).toBe(rows.some((r) => r.orderId ?? r.orderRef));
        expect(filled.has("amount")).toBe(rows.some((r) => r.amountCents !== undefined));
      }),
    );
  });
});
