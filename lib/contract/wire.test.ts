import fc from "fast-check";
import { z } from "zod";
import * as wire from "./wire";

describe("wire contract", () => {
  it("derives the inbox's views from the thread statuses", () => {
    expect(wire.INBOX_THREAD_STATUSES).toEqual([...wire.THREAD_STATUSES, "all"]);
    expect(wire.INBOX_STATUSES).toEqual(["pending", ...wire.THREAD_STATUSES, "all"]);
    for (const s of wire.ACTIVE_RUN_STATUSES) expect(wire.RUN_STATUSES).toContain(s);
  });

  it("formats minor units the same on every machine", () => {
    expect(wire.formatMoney(24900)).toBe("€249.00");
    expect(wire.formatMoney(5, "EUR")).toBe("€0.05");
    expect(wire.formatMoney(123456, "USD")).toBe("US$1,234.56");
    // Formatters are kept per currency: any mix of amounts and codes reads as a new formatter would say it, and a code
    // Intl refuses is refused every time (never kept).
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.string({ minLength: 0, maxLength: 4 })), {
          maxLength: 80,
        }),
        (calls) => {
          for (const [cents, currency] of calls) {
            const fresh = outcome(() =>
              new Intl.NumberFormat("en-IE", { style: "currency", currency }).format(cents / 100),
            );
            const ours = outcome(() => wire.formatMoney(cents, currency));
            expect(ours).toBe(fresh);
          }
        },
      ),
    );
  });

  it("turns a zod error into one line and its fields", () => {
    const schema = z.strictObject({ limit: z.number().max(10), nested: z.object({ id: z.string() }) });
    const parsed = schema.safeParse({ limit: 11, nested: { id: 1 } });
    if (parsed.success) throw new Error("expected a failure");
    expect(wire.issuesMessage(parsed.error)).toMatch(/^limit: .+; nested\.id: .+$/);
    expect(wire.issuePaths(parsed.error)).toEqual(["limit", "nested.id"]);
    const whole = z.string().safeParse(3);
    if (whole.success) throw new Error("expected a failure");
    expect(wire.issuesMessage(whole.error, "body")).toMatch(/^body: /);
    expect(wire.issuePaths(whole.error, "body")).toEqual(["body"]);
    expect(wire.issuesMessage(whole.error)).toMatch(/^: /);
  });
});

/** What a call gives: its text, or the name of the error it throws. */
function outcome(call: () => string): string {
  try {
    return call();
  } catch (error) {
    return (error as Error).name;
  }
}
