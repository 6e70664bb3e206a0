import { layoutLanes } from "./lanes";

const cp = (checkpointId: string, parentCheckpointId: string | null, branch: string) => ({
  checkpointId,
  parentCheckpointId,
  branch,
});

describe("layoutLanes", () => {
  it("draws one lane for a straight history, from the head down to the root", () => {
    const layout = layoutLanes([cp("c", "b", "main"), cp("b", "a", "main"), cp("a", null, "main")], ["main"]);
    expect(layout.laneCount).toBe(1);
    expect(layout.rows.map((r) => r.lines)).toEqual([
      [{ lane: 0, segment: "down" }],
      [{ lane: 0, segment: "through" }],
      [{ lane: 0, segment: "up" }],
    ]);
  });

  it("gives a branch its own lane and joins it to the checkpoint it was forked from", () => {
    // a ← b ← c (branch-1, the old head) and b ← d ← e (main, the fork, newest).
    const rows = [
      cp("e", "d", "main"),
      cp("d", "b", "main"),
      cp("c", "b", "branch-1"),
      cp("b", "a", "main"),
      cp("a", null, "main"),
    ];
    const layout = layoutLanes(rows, ["main", "branch-1"]);
    expect(layout.laneCount).toBe(2);
    expect(layout.rows.map((r) => r.lane)).toEqual([0, 0, 1, 0, 0]);
    expect(layout.rows[2]?.lines).toContainEqual({ lane: 1, segment: "down" });
    expect(layout.rows[2]?.lines).toContainEqual({ lane: 0, segment: "through" });
    expect(layout.rows[3]?.lines).toContainEqual({ lane: 1, segment: "up" });
    expect(layout.rows[3]?.joins).toEqual([{ from: 0, to: 1 }]);
    expect(layout.rows[4]?.lines).toEqual([{ lane: 0, segment: "up" }]);
  });

  it("keeps a line going down when the chain continues on an older page", () => {
    const layout = layoutLanes([cp("c", "b", "main"), cp("b", "a", "main")], ["main"]);
    expect(layout.rows[1]?.lines).toEqual([{ lane: 0, segment: "through" }]);
  });

  it("puts labels the legend does not know in lanes after the known ones", () => {
    const layout = layoutLanes([cp("x", null, "unknown"), cp("a", null, "main")], ["main"]);
    expect(layout.laneOf.get("unknown")).toBe(1);
  });
});
