import { evaluatePolicy } from "./policy";
import type { OrderSnapshot } from "./state";

const NOW = new Date("2026-03-31T12:00:00Z");
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString();

function order(overrides: Partial<OrderSnapshot> = {}): OrderSnapshot {
  return {
    id: "ORD-2001",
    customerName: "Test Customer",
    customerEmail: "test@example.com",
    amountCents: 4000,
    currency: "EUR",
    placedAt: daysAgo(5),
    paymentMethod: "card",
    items: [{ sku: "X", name: "Thing", quantity: 1, unitCents: 4000 }],
    status: "delivered",
    flagged: false,
    ...overrides,
  };
}

const codes = (input: Parameters<typeof evaluatePolicy>[0]) =>
  evaluatePolicy(input).findings.map((f) => f.code);

describe("refund policy", () => {
  it("auto-approves a small, recent, delivered, unflagged refund within the order total", () => {
    expect(evaluatePolicy({ order: order(), requestedCents: 4000, refundedCents: 0, now: NOW })).toEqual({
      autoApprove: true,
      findings: [],
    });
  });

  it("auto-approves exactly €50.00 on the 30th day, and blocks a cent or a day more", () => {
    const o = order({ amountCents: 9000, placedAt: daysAgo(30) });
    expect(evaluatePolicy({ order: o, requestedCents: 5000, refundedCents: 0, now: NOW }).autoApprove).toBe(
      true,
    );
    expect(codes({ order: o, requestedCents: 5001, refundedCents: 0, now: NOW })).toEqual([
      "over_auto_limit",
    ]);
    const late = order({ placedAt: daysAgo(31) });
    expect(codes({ order: late, requestedCents: 1000, refundedCents: 0, now: NOW })).toEqual([
      "late_request",
    ]);
  });

  it("blocks flagged and undelivered orders", () => {
    expect(
      codes({ order: order({ flagged: true }), requestedCents: 100, refundedCents: 0, now: NOW }),
    ).toEqual(["flagged_order"]);
    for (const status of ["shipped", "processing", "cancelled"]) {
      expect(codes({ order: order({ status }), requestedCents: 100, refundedCents: 0, now: NOW })).toEqual([
        "not_delivered",
      ]);
    }
  });

  it("blocks more than the order total minus what was already refunded", () => {
    expect(codes({ order: order(), requestedCents: 4001, refundedCents: 0, now: NOW })).toEqual([
      "exceeds_order_total",
    ]);
    expect(codes({ order: order(), requestedCents: 3000, refundedCents: 2000, now: NOW })).toEqual([
      "already_refunded",
      "exceeds_order_total",
    ]);
  });

  it("reports every failing rule as a block finding with a message", () => {
    const result = evaluatePolicy({
      order: order({ amountCents: 10_000, placedAt: daysAgo(60), flagged: true, status: "shipped" }),
      requestedCents: 12_000,
      refundedCents: 0,
      now: NOW,
    });
    expect(result.autoApprove).toBe(false);
    expect(result.findings.map((f) => f.code)).toEqual([
      "over_auto_limit",
      "late_request",
      "flagged_order",
      "not_delivered",
      "exceeds_order_total",
    ]);
    expect(result.findings.every((f) => f.severity === "block" && f.message.length > 0)).toBe(true);
    expect(result.findings[0]?.message).toContain("€120.00");
  });
});
