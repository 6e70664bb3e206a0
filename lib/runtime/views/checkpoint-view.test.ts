import { diff } from "jsondiffpatch";
import { changedKeys } from "./checkpoint-view";

describe("changedKeys", () => {
  it("sorts the top-level keys of a delta into added, changed and removed", () => {
    const delta = diff(
      { decision: null, reason: "late", messages: [{ id: "m1" }], gone: 1, same: { a: 1 } },
      {
        decision: { decision: "approve" },
        reason: "late",
        messages: [{ id: "m1" }, { id: "m2" }],
        fresh: true,
        same: { a: 1 },
      },
    );
    expect(changedKeys(delta)).toEqual({
      added: ["fresh"],
      changed: ["decision", "messages"],
      removed: ["gone"],
    });
  });

  it("is empty for no delta, and for a delta that is not an object's", () => {
    expect(changedKeys(undefined)).toEqual({ added: [], changed: [], removed: [] });
    expect(changedKeys(null)).toEqual({ added: [], changed: [], removed: [] });
    expect(changedKeys(diff([1], [1, 2]))).toEqual({ added: [], changed: [], removed: [] });
    expect(changedKeys([1, 2])).toEqual({ added: [], changed: [], removed: [] });
  });

  it("counts a value replaced by null as changed and a text diff as changed", () => {
    expect(changedKeys({ a: [1, null], b: ["@@ -1 +1 @@", 0, 2] })).toEqual({
      added: [],
      changed: ["a", "b"],
      removed: [],
    });
  });
});
