import type { Queryable } from "@/lib/db/tx";
import { connectorsFromEnv } from "./dispatcher";
import { EFFECT_KINDS } from "./kinds";

/*
 * One list of effect kinds (issue 29): the dispatcher delivers exactly the kinds declared next to their connectors,
 * and each says something for people and offers an operator something to do.
 */
describe("the effect kinds", () => {
  it("each connects a connector that delivers that very kind, one per kind (what the dispatcher runs)", () => {
    const delivered = [...connectorsFromEnv({} as Queryable).keys()].sort();
    expect(delivered).toEqual(EFFECT_KINDS.map((k) => k.kind).sort());
  });

  it.each(EFFECT_KINDS.map((k) => [k.kind, k] as const))(
    "%s: a summary and an operator's actions",
    (_kind, kind) => {
      expect(kind.summary({}).length).toBeGreaterThan(0);
      for (const status of ["failed", "unconfirmed"]) {
        const actions = kind.taskActions(status);
        expect(actions).toContain("retry");
        expect(actions).toContain("mark_handled");
      }
    },
  );
});
