import { z } from "zod";
import {
  ACTIVE_RUN_STATUSES,
  formatMoney,
  INBOX_STATUSES,
  INBOX_THREAD_STATUSES,
  issuePaths,
  issuesMessage,
  RUN_STATUSES,
  THREAD_STATUSES,
} from "./wire";

describe("wire contract", () => {
  it("derives the inbox's views from the thread statuses", () => {
    expect(INBOX_THREAD_STATUSES).toEqual([...THREAD_STATUSES, "all"]);
    expect(INBOX_STATUSES).toEqual(["pending", ...THREAD_STATUSES, "all"]);
    for (const s of ACTIVE_RUN_STATUSES) expect(RUN_STATUSES).toContain(s);
  });

  it("formats minor units the same on every machine", () => {
    expect(formatMoney(24900)).toBe("€249.00");
    expect(formatMoney(5, "EUR")).toBe("€0.05");
    expect(formatMoney(123456, "USD")).toBe("US$1,234.56");
  });

  it("turns a zod error into one line and its fields", () => {
    const schema = z.strictObject({ limit: z.number().max(10), nested: z.object({ id: z.string() }) });
    const parsed = schema.safeParse({ limit: 11, nested: { id: 1 } });
    if (parsed.success) throw new Error("expected a failure");
    expect(issuesMessage(parsed.error)).toMatch(/^limit: .+; nested\.id: .+$/);
    expect(issuePaths(parsed.error)).toEqual(["limit", "nested.id"]);
    const whole = z.string().safeParse(3);
    if (whole.success) throw new Error("expected a failure");
    expect(issuesMessage(whole.error, "body")).toMatch(/^body: /);
    expect(issuePaths(whole.error, "body")).toEqual(["body"]);
    expect(issuesMessage(whole.error)).toMatch(/^: /);
  });
});
