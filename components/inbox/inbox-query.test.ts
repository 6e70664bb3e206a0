import {
  centsToEuros,
  eurosToCents,
  hasFilters,
  inboxSearch,
  isPendingView,
  pickInboxParams,
  QUEUE_PARAM_NAMES,
  queueSearch,
  threadHref,
} from "./inbox-query";

describe("inbox URL parameters", () => {
  it("keeps the known, non-empty parameters (the first of repeated ones)", () => {
    expect(
      pickInboxParams({ action: "refund_approval", minAmount: ["100", "200"], maxAmount: " ", foo: "bar" }),
    ).toEqual({ action: "refund_approval", minAmount: "100" });
  });

  it("writes the API's query string, with a cursor only when paging", () => {
    expect(inboxSearch({ status: "all", limit: "25" })).toBe("status=all&limit=25");
    expect(inboxSearch({ action: "input_text", minAmount: undefined }, "abc")).toBe(
      "action=input_text&cursor=abc",
    );
  });

  it("tells the pending view and its filters apart", () => {
    expect(isPendingView({})).toBe(true);
    expect(isPendingView({ status: "pending" })).toBe(true);
    expect(isPendingView({ status: "all" })).toBe(false);
    expect(hasFilters({ limit: "10" })).toBe(false);
    expect(hasFilters({ olderThan: "15m" })).toBe(true);
  });

  it("carries a view's filters to the thread page (never its page size or cursor), nothing for the whole queue", () => {
    expect(queueSearch({ limit: "25" })).toBe("");
    expect(queueSearch({ action: "refund_approval", limit: "50", minAmount: "3910" })).toBe(
      "?action=refund_approval&minAmount=3910",
    );
    // The listing of threads is not a queue of decisions: its links open the thread alone.
    expect(queueSearch({ status: "all", action: "input_text" })).toBe("");
    expect(threadHref("th/1", queueSearch({ assigned: "me" }))).toBe("/threads/th%2F1?assigned=me");
    expect(threadHref("th1")).toBe("/threads/th1");
    for (const name of QUEUE_PARAM_NAMES) {
      expect(queueSearch({ [name]: "x", limit: "10" }), name).toBe(`?${name}=x`);
      expect(hasFilters({ [name]: "x" }), name).toBe(true);
    }
    expect(hasFilters({ status: "pending", limit: "10" })).toBe(false);
  });

  it("converts amounts between the form's euros and the API's cents", () => {
    expect(eurosToCents("249.5")).toBe("24950");
    expect(eurosToCents("1000")).toBe("100000");
    expect(eurosToCents("0,99")).toBe("99");
    expect(eurosToCents("  ")).toBeUndefined();
    expect(eurosToCents("-5")).toBeNull();
    expect(eurosToCents("1.234")).toBeNull();
    expect(centsToEuros("24950")).toBe("249.50");
    expect(centsToEuros("100000")).toBe("1000");
    expect(centsToEuros(undefined)).toBe("");
  });
});
