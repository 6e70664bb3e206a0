import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SeenEffect, ShadowOutcome } from "./shadow";
import { judge, tally } from "./shadow-verdict";

/*
 * The deploy shadow's verdicts: the worst difference wins, and the command's exit code follows `consequential`
 * (money, an effect, or a question whose answer acts). Outcomes are generated; the verdict is checked against what was
 * changed in them.
 */

const payment = (amountCents: number, method = "original_payment"): SeenEffect => ({
  kind: "payment",
  status: "queued",
  authorized: true,
  payload: { orderId: "ORD-1", amountCents, currency: "EUR", method },
});

const outcome = (over: Partial<ShadowOutcome> = {}): ShadowOutcome => ({
  threadId: "t1",
  agent: "refund",
  pinned: "1",
  ranOn: "1",
  migrated: false,
  asked: [{ action: "refund_approval", payload: { title: "Refund of €120.00" }, acts: true }],
  askedAsRecorded: true,
  answers: [{ action: "refund_approval", payload: { decision: "approve" }, acts: false }],
  next: [{ action: "confirm_email", payload: { to: "a@example.com", subject: "s", body: "b" }, acts: true }],
  effects: [payment(12000)],
  error: null,
  ...over,
});

describe("the deploy shadow's verdict", () => {
  it("the same outcome is the same, whatever it holds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.string(), (cents, body) => {
        const o = outcome({
          effects: [payment(cents)],
          next: [
            { action: "confirm_email", payload: { to: "a@example.com", subject: "s", body }, acts: true },
          ],
        });
        expect(judge(o, structuredClone(o))).toMatchObject({ verdict: "same", consequential: false });
      }),
    );
  });

  it("a different amount is amounts_changed, naming both amounts", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 1_000_000 }), (a, b) => {
        fc.pre(a !== b);
        const v = judge(outcome({ effects: [payment(a)] }), outcome({ effects: [payment(b)] }));
        expect(v).toMatchObject({ verdict: "amounts_changed", consequential: true });
        expect(v.details.join(" ")).toContain(`${a} → ${b} cents`);
      }),
    );
  });

  it("the same money by another method, or an effect more or less, is effects_changed", () => {
    expect(judge(outcome(), outcome({ effects: [payment(12000, "store_credit")] }))).toMatchObject({
      verdict: "effects_changed",
      consequential: true,
    });
    const email: SeenEffect = {
      kind: "email",
      status: "queued",
      authorized: false,
      payload: { to: "a@example.com" },
    };
    expect(judge(outcome(), outcome({ effects: [payment(12000), email] }))).toMatchObject({
      verdict: "effects_changed",
    });
  });

  it("a question asked differently is question_changed; consequential when its answer acts", () => {
    const draft = judge(
      outcome(),
      outcome({
        next: [
          {
            action: "confirm_email",
            payload: { to: "a@example.com", subject: "s", body: "other" },
            acts: true,
          },
        ],
      }),
    );
    expect(draft).toMatchObject({ verdict: "question_changed", consequential: true });
    const free = judge(
      outcome({ next: [{ action: "input_text", payload: { title: "Why?" }, acts: false }] }),
      outcome({ next: [{ action: "input_text", payload: { title: "Why not?" }, acts: false }] }),
    );
    expect(free).toMatchObject({ verdict: "question_changed", consequential: false });
    expect(judge(outcome(), outcome({ askedAsRecorded: false })).verdict).toBe("question_changed");
  });

  it("a candidate that fails where the serving build does not is an error; the same failure is not", () => {
    const failed = outcome({
      error: { code: "conflict:graph_version", message: "refused" },
      effects: [],
      next: [],
    });
    expect(judge(outcome(), failed)).toMatchObject({ verdict: "error", consequential: true });
    expect(judge(failed, structuredClone(failed)).verdict).toBe("same");
    expect(tally([judge(outcome(), failed), judge(outcome(), outcome())])).toEqual({
      error: 1,
      amounts_changed: 0,
      effects_changed: 0,
      question_changed: 0,
      same: 1,
    });
  });
});
