import fc from "fast-check";
import { z } from "zod";
import type { InterruptAction, InterruptPayload, RefundApprovalPayload } from "./contract";
import { QUESTION_KINDS } from "./kinds";
import {
  answerJsonSchema,
  answerSchemaFor,
  parseInterruptPayload,
  summarizePayload,
  validateAnswer,
} from "./validate";

const approval = (requested: number, total = 24900): RefundApprovalPayload => ({
  action: "refund_approval",
  title: "Refund",
  order: {
    id: "ORD-1002",
    placedAt: "2026-11-20T00:00:00Z",
    paymentMethod: "card",
    status: "delivered",
    total: { amountCents: total, currency: "EUR" },
    items: [{ name: "Headphones", quantity: 1, unitCents: total }],
  },
  customer: { name: "Lars", email: "lars@example.com" },
  requested: { amountCents: requested, currency: "EUR" },
  reason: "broken",
  findings: [],
});

describe("refund approval answers", () => {
  it("accepts approve, reject with a note, and a smaller amount", () => {
    expect(validateAnswer(approval(24900), { decision: "approve" }).ok).toBe(true);
    expect(validateAnswer(approval(24900), { decision: "reject", note: "late" }).ok).toBe(true);
    expect(validateAnswer(approval(24900), { decision: "approve_partial", amountCents: 10000 }).ok).toBe(
      true,
    );
  });

  it("refuses a reject without a note, a partial amount not below the request, and unknown decisions", () => {
    expect(validateAnswer(approval(24900), { decision: "reject" }).ok).toBe(false);
    expect(validateAnswer(approval(24900), { decision: "reject", note: "  " }).ok).toBe(false);
    expect(validateAnswer(approval(24900), { decision: "approve_partial", amountCents: 24900 }).ok).toBe(
      false,
    );
    expect(validateAnswer(approval(24900), { decision: "maybe" }).ok).toBe(false);
  });

  it("never approves more than the order total", () => {
    const tooMuch = approval(50000, 24900);
    const check = validateAnswer(tooMuch, { decision: "approve" });
    expect(check.ok).toBe(false);
    expect(check.ok ? "" : check.error).toMatch(/more than the order total/);
    expect(validateAnswer(tooMuch, { decision: "approve_partial", amountCents: 30000 }).ok).toBe(false);
    expect(validateAnswer(tooMuch, { decision: "approve_partial", amountCents: 24900 }).ok).toBe(true);
  });

  it("never approves more than is left to refund after earlier (partial) refunds", () => {
    // €249 order, €150 already refunded: €99 left.
    const left = { ...approval(12000), refundable: { amountCents: 9900, currency: "EUR" } };
    const full = validateAnswer(left, { decision: "approve" });
    expect(full.ok).toBe(false);
    expect(full.ok ? "" : full.error).toMatch(/more than the 99.00 EUR left to refund/);
    const partial = validateAnswer(left, { decision: "approve_partial", amountCents: 10000 });
    expect(partial.ok ? "" : partial.error).toMatch(/only 99.00 EUR of this order is left to refund/);
    expect(validateAnswer(left, { decision: "approve_partial", amountCents: 9900 }).ok).toBe(true);
    // Nothing left: only a rejection is possible.
    const none = { ...approval(5000), refundable: { amountCents: 0, currency: "EUR" } };
    expect(validateAnswer(none, { decision: "approve" }).ok).toBe(false);
    expect(validateAnswer(none, { decision: "approve_partial", amountCents: 1 }).ok).toBe(false);
    expect(validateAnswer(none, { decision: "reject", note: "fully refunded" }).ok).toBe(true);
  });
});

describe("reading payloads", () => {
  it("unwraps a one-element array and refuses what is not in the contract", () => {
    expect(parseInterruptPayload([approval(100)]).ok).toBe(true);
    const unknown = parseInterruptPayload({ action: "issue_voucher", amount: 5 });
    expect(unknown.ok).toBe(false);
  });

  it("summarizes an approval for the inbox", () => {
    expect(summarizePayload(approval(100))).toEqual({
      title: "Refund",
      orderId: "ORD-1002",
      customerName: "Lars",
      amountCents: 100,
      currency: "EUR",
      findings: [],
    });
    // The policy's findings travel with the summary: the inbox row shows them.
    const flag = { code: "flagged_order", severity: "block", message: "Fraud screening flagged this order." };
    expect(summarizePayload({ ...approval(100), findings: [flag] }).findings).toEqual([flag]);
    expect(summarizePayload({ nope: true }).title).toBeNull();
  });

  /** Every amount a payload holds (an `amountCents` anywhere in it, as money or as a call's argument). */
  function amountsIn(value: unknown): number[] {
    if (Array.isArray(value)) return value.flatMap(amountsIn);
    if (typeof value !== "object" || value === null) return [];
    const own = Object.entries(value).flatMap(([key, v]) =>
      key === "amountCents" && Number.isInteger(v) ? [v as number] : amountsIn(v),
    );
    return own;
  }

  it("gives the inbox an amount for every kind of question whose payload holds one (issue 55)", () => {
    const kinds = Object.entries(QUESTION_KINDS) as [InterruptAction, { example: unknown }][];
    const withMoney = kinds.filter(([, k]) => amountsIn(k.example).length > 0).map(([action]) => action);
    // The kinds with money today; a new one joins this check by its example alone.
    expect(withMoney).toEqual(expect.arrayContaining(["refund_approval", "goodwill_voucher", "tool_review"]));
    for (const [action, kind] of kinds) {
      const amounts = amountsIn(kind.example);
      const summary = summarizePayload(kind.example);
      if (amounts.length === 0) continue;
      expect({ action, amounts }).toEqual({ action, amounts: expect.arrayContaining([summary.amountCents]) });
    }
  });

  it("keeps a reviewed call's amount when it names no currency (the thread's context says it)", () => {
    const review = {
      ...QUESTION_KINDS.tool_review.example,
      requests: [
        { ...QUESTION_KINDS.tool_review.example.requests[0], args: { orderId: "ORD-7", amountCents: 350 } },
      ],
    };
    expect(summarizePayload(review)).toMatchObject({ orderId: "ORD-7", amountCents: 350, currency: null });
  });
});

describe("answer JSON Schemas", () => {
  /** A question of the kind with every number in it replaced (amounts, lengths, limits): what may vary by question. */
  const variant = (example: unknown) =>
    fc.array(fc.integer({ min: 1, max: 10_000_000 }), { minLength: 64, maxLength: 64 }).map((numbers) => {
      let i = 0;
      const swap = (value: unknown): unknown =>
        typeof value === "number"
          ? numbers[i++ % numbers.length]
          : Array.isArray(value)
            ? value.map(swap)
            : value && typeof value === "object"
              ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, swap(v)]))
              : value;
      return swap(example) as InterruptPayload;
    });

  it.each(Object.keys(QUESTION_KINDS) as InterruptAction[])(
    "%s: the schema sent is the one its answer contract makes, for any question of the kind",
    (action) => {
      fc.assert(
        fc.property(variant(QUESTION_KINDS[action].example), (payload) => {
          const fresh = z.toJSONSchema(answerSchemaFor(payload), { unrepresentable: "any" });
          expect(answerJsonSchema(payload)).toEqual(fresh);
        }),
        { numRuns: 30 },
      );
    },
  );

  it("a kind whose schema cannot differ between questions makes it once", () => {
    const one = approval(24900);
    const other = approval(1200, 5000);
    expect(answerJsonSchema(other)).toBe(answerJsonSchema(one));
    expect(Object.isFrozen(answerJsonSchema(one))).toBe(true);
  });
});
