import fc from "fast-check";
import { commonAncestor } from "./ancestry";

/** A generated tree: node i (> 0) has a parent among 0 … i-1; some parents are "not loaded" (dropped). */
const trees = fc
  .integer({ min: 1, max: 40 })
  .chain((n) =>
    fc.tuple(
      fc.constant(n),
      fc.array(fc.nat(), { minLength: n, maxLength: n }),
      fc.nat({ max: n - 1 }),
      fc.nat({ max: n - 1 }),
      fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    ),
  );

describe("commonAncestor", () => {
  it("is the newest step both descend from, or null when their chains leave what is loaded first", () => {
    fc.assert(
      fc.property(trees, ([n, picks, a, b, loadedFlags]) => {
        const parent = (i: number) => (i === 0 ? null : (picks[i] ?? 0) % i);
        // a and b are always loaded; others may not be.
        const loaded = new Set(
          Array.from({ length: n }, (_, i) => i).filter((i) => i === a || i === b || loadedFlags[i]),
        );
        const checkpoints = [...loaded].map((i) => ({
          checkpointId: `c${i}`,
          parentCheckpointId: parent(i) === null ? null : `c${parent(i)}`,
        }));
        // The chain of loaded ancestors (self first), stopping at the first one not loaded.
        const chain = (i: number) => {
          const out: number[] = [];
          for (let c: number | null = i; c !== null && loaded.has(c); c = parent(c)) out.push(c);
          return out;
        };
        const ofA = new Set(chain(a));
        const expected = chain(b).find((c) => ofA.has(c));
        const found = commonAncestor(checkpoints, `c${a}`, `c${b}`);
        expect(found?.checkpointId ?? null).toBe(expected === undefined ? null : `c${expected}`);
        if (found)
          expect(commonAncestor(checkpoints, `c${b}`, `c${a}`)?.checkpointId).toBe(found.checkpointId);
      }),
      { numRuns: 500 },
    );
  });

  it("on a straight line, the older of the two", () => {
    const line = [
      { checkpointId: "c", parentCheckpointId: "b" },
      { checkpointId: "b", parentCheckpointId: "a" },
      { checkpointId: "a", parentCheckpointId: null },
    ];
    expect(commonAncestor(line, "c", "a")?.checkpointId).toBe("a");
  });
});
