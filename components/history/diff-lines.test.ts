import { create } from "jsondiffpatch";
import { flattenDelta, groupByKey, preview, rootKey } from "./diff-lines";

// The same options as the checkpoint view's differ: array items matched by id, no text diffs.
const differ = create({
  objectHash: (item, index) => {
    const id = (item as { id?: unknown }).id;
    return typeof id === "string" ? `id:${id}` : `index:${index ?? ""}`;
  },
});

describe("flattenDelta", () => {
  it("lists added, changed and removed keys with their values", () => {
    const delta = differ.diff({ a: 1, b: null, c: "x" }, { a: 2, b: { ok: true }, d: [1] });
    expect(flattenDelta(delta)).toEqual([
      { kind: "changed", path: "a", before: 1, after: 2 },
      { kind: "changed", path: "b", before: null, after: { ok: true } },
      { kind: "removed", path: "c", before: "x" },
      { kind: "added", path: "d", after: [1] },
    ]);
  });

  it("descends into nested objects and arrays, with readable paths", () => {
    const before = { order: { status: "delivered", items: [{ name: "Mug", quantity: 1 }] } };
    const after = { order: { status: "refunded", items: [{ name: "Mug", quantity: 2 }] } };
    expect(flattenDelta(differ.diff(before, after))).toEqual([
      { kind: "changed", path: "order.items[0].quantity", before: 1, after: 2 },
      { kind: "changed", path: "order.status", before: "delivered", after: "refunded" },
    ]);
  });

  it("reads an appended message as one addition and a dropped one as a removal", () => {
    const m1 = { id: "m1", role: "user", content: "hi" };
    const m2 = { id: "m2", role: "assistant", content: "hello" };
    expect(flattenDelta(differ.diff({ messages: [m1] }, { messages: [m1, m2] }))).toEqual([
      { kind: "added", path: "messages[1]", after: m2 },
    ]);
    expect(flattenDelta(differ.diff({ messages: [m1, m2] }, { messages: [m2] }))).toEqual([
      { kind: "removed", path: "messages[0]", before: m1 },
    ]);
  });

  it("quotes keys that are not identifiers, reports moves and text patches, ignores nothing-deltas", () => {
    expect(flattenDelta({ "a b": [1, 2] })).toEqual([
      { kind: "changed", path: '["a b"]', before: 1, after: 2 },
    ]);
    expect(flattenDelta({ xs: { _t: "a", _0: ["", 2, 3] } })).toEqual([
      { kind: "moved", path: "xs[0]", to: 2 },
    ]);
    expect(flattenDelta({ s: ["@@ -1 +1 @@", 0, 2] })).toEqual([
      { kind: "text", path: "s", patch: "@@ -1 +1 @@" },
    ]);
    expect(flattenDelta(undefined)).toEqual([]);
    expect(flattenDelta(null)).toEqual([]);
  });
});

describe("grouping and previews", () => {
  it("groups by top-level key", () => {
    expect(rootKey("order.items[0]")).toBe("order");
    expect(rootKey("messages[3]")).toBe("messages");
    expect(rootKey('["a b"].c')).toBe("a b");
    const groups = groupByKey(flattenDelta({ a: { x: [1, 2], y: [3] }, b: [4] }));
    expect(groups.map(([key, changes]) => [key, changes.length])).toEqual([
      ["a", 2],
      ["b", 1],
    ]);
  });

  it("previews messages as role and text, and cuts long values", () => {
    expect(preview({ id: "m", role: "user", content: "refund please" }).text).toBe('user: "refund please"');
    const long = preview("x".repeat(500), 20);
    expect(long.truncated).toBe(true);
    expect(long.text).toHaveLength(20);
    expect(preview(null).text).toBe("null");
  });
});
