import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildTree } from "../upgrade/tree";

/*
 * The guide's tree: this repository with exactly what "Add your own agent" in the README tells a team to do, for each
 * fixture agent under e2e/guide/agents/ — copy its folder to lib/agents/<folder>/, then add its import and its
 * `registerAgent(…)` line to lib/agents.ts — and nothing else. Then `next build` there, type check included: a shared
 * file the compiler wanted edited would fail the build.
 */

const ROOT = process.cwd();
export const GUIDE_AGENTS_DIR = join(ROOT, "e2e", "guide", "agents");

/** The fixture agents: folder, and the name its agent.ts exports. */
export function guideAgents(): { folder: string; exportName: string }[] {
  return readdirSync(GUIDE_AGENTS_DIR).map((folder) => {
    const text = readFileSync(join(GUIDE_AGENTS_DIR, folder, "agent.ts"), "utf8");
    const exportName = /export const (\w+): AgentDefinition/.exec(text)?.[1];
    if (!exportName) throw new Error(`guide tree: ${folder}/agent.ts exports no AgentDefinition`);
    return { folder, exportName };
  });
}

/** Follow the guide in `dir`: the folder, and the registry's import and entry. */
export function followGuide(dir: string): void {
  const registry = join(dir, "lib", "agents.ts");
  let text = readFileSync(registry, "utf8");
  for (const { folder, exportName } of guideAgents()) {
    cpSync(join(GUIDE_AGENTS_DIR, folder), join(dir, "lib", "agents", folder), {
      recursive: true,
      filter: (src) => !src.endsWith(".test.ts"),
    });
    const lines = text.split("\n");
    const lastImport = lines.findLastIndex((l) => l.startsWith("import "));
    lines.splice(lastImport + 1, 0, `import { ${exportName} } from "@/lib/agents/${folder}/agent";`);
    const lastRegister = lines.findLastIndex((l) => l.startsWith("registerAgent("));
    if (lastRegister < 0)
      throw new Error("guide tree: lib/agents.ts registers nothing (the guide no longer applies)");
    lines.splice(lastRegister + 1, 0, `registerAgent(${exportName});`);
    text = lines.join("\n");
  }
  writeFileSync(registry, text);
}

/** Build the guide's tree (kept and reused when GUIDE_TREE_DIR is set). */
export function buildGuideTree(log: (line: string) => void = console.log) {
  return buildTree({
    name: "guide",
    reuse: process.env.GUIDE_TREE_DIR,
    log,
    // Type-checked: the proof that nothing shared has to change is that the compiler asks for nothing.
    buildEnv: { NEXT_BUILD_SKIP_TYPECHECK: "0" },
    prepare: followGuide,
  });
}
