import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentsOfPackage } from "@/lib/agents/packages";
import { listAgents } from "@/lib/runtime/agents/registry";
import { readAgentConfig, registryText, writeAgentRegistry } from "@/scripts/agents-registry.mjs";
import "@/lib/agents/index";

/*
 * Agent packages: agents.config.json lists them, the registry's static imports are generated from it, and the console's
 * own code names none of them — adding one is a line in the config.
 */
const ROOT = process.cwd();

function scratch(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "hitl-agentcfg-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  mkdirSync(join(dir, "lib", "agents"), { recursive: true });
  return dir;
}

describe("agent packages (agents.config.json)", () => {
  it("every package the shipped config lists is registered, with every agent it exports", () => {
    const ids = listAgents().map((a) => a.id);
    expect(readAgentConfig(ROOT)).toContain("./examples/invoice-agent");
    expect(ids).toContain("invoice_dispute");
  });

  it("no file of the console's own (lib/, app/, components/) names a package or its agents: the config line is all", () => {
    const tracked = execFileSync("git", ["ls-files", "lib", "app", "components"], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .split("\n")
      .filter(Boolean);
    const naming = tracked.filter((file) => {
      const text = readFileSync(join(ROOT, file), "utf8");
      return /invoice_dispute|invoice-agent|examples\//.test(text) && file !== "lib/agents/packages.test.ts";
    });
    expect(naming).toEqual([]);
    // The generated registry is not committed: it is rebuilt from the config wherever the tree is built.
    expect(readFileSync(join(ROOT, ".gitignore"), "utf8")).toContain("lib/agents/registered.generated.ts");
  });

  it("generates one static import per package: a path resolved to its entry, an npm package by its name", () => {
    const dir = scratch({
      "agents.config.json": JSON.stringify({ agents: ["./teams/disputes", "@acme/vendor-agent"] }),
      "teams/disputes/package.json": JSON.stringify({ name: "disputes", exports: { ".": "./src/index.ts" } }),
      "teams/disputes/src/index.ts": "export const agents = [];\n",
    });
    try {
      expect(writeAgentRegistry(dir)).toEqual(["./teams/disputes", "@acme/vendor-agent"]);
      const text = readFileSync(join(dir, "lib/agents/registered.generated.ts"), "utf8");
      expect(text).toContain('import * as agentPackage0 from "../../teams/disputes/src/index";');
      expect(text).toContain('import * as agentPackage1 from "@acme/vendor-agent";');
      expect(text).toContain('{ specifier: "@acme/vendor-agent", module: agentPackage1 }');
      // No config: no packages, an empty registry (the shipped agents are registered by lib/agents/index.ts).
      expect(registryText(dir, [])).toContain("export const AGENT_PACKAGES: AgentPackage[] = [];");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a config it cannot follow stops with the package's name", () => {
    const cases: [string, RegExp][] = [
      ["{ not json", /not valid JSON/],
      [JSON.stringify({ agents: "./x" }), /must be a list of module specifiers/],
      [JSON.stringify({ agents: ["./x", "./x"] }), /listed twice/],
      [JSON.stringify({ agents: ["./missing-package"] }), /\.\/missing-package does not exist/],
    ];
    for (const [config, error] of cases) {
      const dir = scratch({ "agents.config.json": config });
      try {
        expect(() => writeAgentRegistry(dir), config).toThrow(error);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it("a package that exports no agent definition is refused by name", () => {
    expect(() => agentsOfPackage({ specifier: "@acme/empty", module: {} })).toThrow(
      /@acme\/empty .* exports no agents/,
    );
    expect(() => agentsOfPackage({ specifier: "@acme/odd", module: { agents: [{ id: "x" }] } })).toThrow(
      /@acme\/odd: its agents\[0\] is not an agent definition/,
    );
    const one = listAgents().find((a) => a.id === "invoice_dispute")!;
    expect(agentsOfPackage({ specifier: "x", module: { default: one } })).toEqual([one]);
  });
});
