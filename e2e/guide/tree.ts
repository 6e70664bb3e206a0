import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/*
 * "Add your own agent", followed to the letter, for each fixture agent under e2e/guide/agents/: copy its folder to
 * lib/agents/<folder>/, then add its import and its `registerAgent(…)` line to lib/agents/index.ts — nothing else. The
 * upgrade suite's v2 build follows it too (a team's own agents arrive with the next deploy): that build is
 * type-checked, and runs the agents over HTTP and in Chromium (flows.ts).
 */

const ROOT = process.cwd();
export const GUIDE_AGENTS_DIR = join(ROOT, "e2e", "guide", "agents");

/** The fixture agents: folder, and the name its agent.ts exports. */
export function guideAgents(): { folder: string; exportName: string }[] {
  return readdirSync(GUIDE_AGENTS_DIR).map((folder) => {
    const text = readFileSync(join(GUIDE_AGENTS_DIR, folder, "agent.ts"), "utf8");
    const exportName = /export const (\w+): AgentDefinition/.exec(text)?.[1];
    if (!exportName) throw new Error(`guide: ${folder}/agent.ts exports no AgentDefinition`);
    return { folder, exportName };
  });
}

/** Follow the guide in `dir`: the folder, and the registry's import and entry. */
export function followGuide(dir: string): void {
  const registry = join(dir, "lib", "agents", "index.ts");
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
      throw new Error("guide: lib/agents/index.ts registers nothing (the guide no longer applies)");
    lines.splice(lastRegister + 1, 0, `registerAgent(${exportName});`);
    text = lines.join("\n");
  }
  writeFileSync(registry, text);
}

/** This repository's files (tracked and new, not ignored), relative paths. */
export function repositoryFiles(): string[] {
  return execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && existsSync(join(ROOT, f)));
}

/** A plain copy of the repository's files (no node_modules, no build), with the guide followed in it. */
export function guideCopy(): { dir: string; remove(): void } {
  const dir = join(tmpdir(), `hitl-guide-${process.pid}-${Date.now()}`);
  for (const file of repositoryFiles()) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  followGuide(dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
