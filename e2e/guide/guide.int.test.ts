import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { guideAgents, guideCopy, repositoryFiles } from "./tree";

/*
 * "Add your own agent", followed to the letter on a copy of this repository (tree.ts): the copy differs in the agents'
 * folders and the registry's lines for them, nothing else. The same steps are taken in the upgrade suite's v2 build,
 * which is type-checked and runs both agents over HTTP and in Chromium (e2e/upgrade/upgrade.int.test.ts, flows.ts).
 */
describe("the guide, followed: one folder and the registry's lines per agent", () => {
  it("touches no file outside the agents' folders but the registry, and only adds lines to it", () => {
    const copy = guideCopy();
    try {
      const ROOT = process.cwd();
      const tracked = repositoryFiles();
      const changed = tracked.filter(
        (f) => !readFileSync(join(copy.dir, f)).equals(readFileSync(join(ROOT, f))),
      );
      expect(changed).toEqual(["lib/agents/index.ts"]);
      const folders = guideAgents().map((a) => `lib/agents/${a.folder}/`);
      const all = execFileSync("find", [join(copy.dir, "lib"), "-type", "f"], { encoding: "utf8" })
        .split("\n")
        .filter(Boolean)
        .map((f) => relative(copy.dir, f));
      const added = all.filter((f) => !tracked.includes(f));
      expect(added.length).toBeGreaterThanOrEqual(2 * guideAgents().length);
      expect(added.filter((f) => !folders.some((folder) => f.startsWith(folder)))).toEqual([]);
      expect(added.every((f) => existsSync(join(copy.dir, f)))).toBe(true);

      const before = readFileSync(join(ROOT, "lib/agents/index.ts"), "utf8").split("\n");
      const after = readFileSync(join(copy.dir, "lib/agents/index.ts"), "utf8").split("\n");
      expect(after.filter((l) => !before.includes(l))).toHaveLength(2 * guideAgents().length);
      expect(before.filter((l) => !after.includes(l))).toEqual([]);
    } finally {
      copy.remove();
    }
  });
});
