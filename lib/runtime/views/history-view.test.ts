import { nodeFromTaskPath } from "@/lib/checkpoint/history";
import { AppError } from "@/lib/contract/errors";
import { labelBranches, parseHistoryQuery } from "./history-view";

const link = (checkpointId: string, parentCheckpointId: string | null) => ({
  checkpointId,
  parentCheckpointId,
});

describe("labelBranches", () => {
  it("labels a straight chain main, with the newest checkpoint as head", () => {
    const tree = labelBranches([link("c1", null), link("c3", "c2"), link("c2", "c1")]);
    expect(tree.headCheckpointId).toBe("c3");
    expect(Object.fromEntries(tree.labels)).toEqual({ c1: "main", c2: "main", c3: "main" });
    expect(tree.branches).toEqual([
      { label: "main", leafCheckpointId: "c3", forkedFromCheckpointId: null, size: 3 },
    ]);
  });

  it("keeps main on the head's chain and numbers the other chains newest leaf first", () => {
    // c1 ─ c2 ─ c3 ─ c4 (old run)
    //        ├─ c5 ─ c6 (first fork)
    //        └─ c7 (second fork, the head)
    //   c3 ─ c8 (a fork of the old run, newer than c6)
    const tree = labelBranches([
      link("c1", null),
      link("c2", "c1"),
      link("c3", "c2"),
      link("c4", "c3"),
      link("c5", "c2"),
      link("c6", "c5"),
      link("c7", "c2"),
      link("c8", "c3"),
    ]);
    expect(tree.headCheckpointId).toBe("c8");
    expect(Object.fromEntries(tree.labels)).toEqual({
      c1: "main",
      c2: "main",
      c3: "main",
      c8: "main",
      c7: "branch-1",
      c5: "branch-2",
      c6: "branch-2",
      c4: "branch-3",
    });
    expect(tree.branches).toEqual([
      { label: "main", leafCheckpointId: "c8", forkedFromCheckpointId: null, size: 4 },
      { label: "branch-1", leafCheckpointId: "c7", forkedFromCheckpointId: "c2", size: 1 },
      { label: "branch-2", leafCheckpointId: "c6", forkedFromCheckpointId: "c2", size: 2 },
      { label: "branch-3", leafCheckpointId: "c4", forkedFromCheckpointId: "c3", size: 1 },
    ]);
  });

  it("ends a chain at a parent that is gone, and labels even a malformed cycle", () => {
    const pruned = labelBranches([link("c5", "c4"), link("c6", "c5"), link("c7", "c4")]);
    expect(Object.fromEntries(pruned.labels)).toEqual({ c5: "branch-1", c6: "branch-1", c7: "main" });
    expect(pruned.branches[1]).toEqual({
      label: "branch-1",
      leafCheckpointId: "c6",
      forkedFromCheckpointId: null,
      size: 2,
    });

    const cyclic = labelBranches([link("c9", null), link("a", "b"), link("b", "a")]);
    expect(cyclic.labels.size).toBe(3);
    expect(cyclic.labels.get("c9")).toBe("main");
  });

  it("has no head and no branches for an empty thread", () => {
    expect(labelBranches([])).toEqual({ headCheckpointId: null, labels: new Map(), branches: [] });
  });
});

describe("nodeFromTaskPath", () => {
  it("reads the node of a pull task and nothing from the caller's or updateState's writes", () => {
    expect(nodeFromTaskPath("~__pregel_pull, human_review")).toBe("human_review");
    expect(nodeFromTaskPath("~__pregel_pull, __start__")).toBe("__start__");
    expect(nodeFromTaskPath("")).toBeNull();
    expect(nodeFromTaskPath("~__interrupt__, 0000000000")).toBeNull();
    expect(nodeFromTaskPath("~__pregel_push, 0000000001")).toBe("~__pregel_push, 0000000001");
    // A pushed task the history query found a tool for is named by the tool.
    expect(nodeFromTaskPath("~tool, issue_store_credit")).toBe("issue_store_credit");
  });
});

describe("parseHistoryQuery", () => {
  const parse = (query: string) => parseHistoryQuery(new URLSearchParams(query));

  it("defaults to 50 newest and reads a cursor", () => {
    expect(parse("")).toEqual({ before: null, limit: 50 });
    expect(parse("limit=200&before=abc")).toEqual({ before: "abc", limit: 200 });
    expect(parse("limit=1")).toEqual({ before: null, limit: 1 });
  });

  it.each([
    ["limit=0", /at least 1/],
    ["limit=201", /at most 200/],
    ["limit=abc", /whole number/],
    ["limit=1.5", /whole number/],
    ["limit=-3", /whole number/],
    ["limit=", /whole number/],
    ["before=", /checkpoint id/],
  ])("rejects %s with bad_request:history", (query, message) => {
    let error: unknown;
    try {
      parse(query);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("bad_request:history");
    expect((error as AppError).status).toBe(400);
    expect((error as AppError).message).toMatch(message);
  });
});
