#!/usr/bin/env node
/**
 * The registry of agent packages, generated from `agents.config.json` (Next bundles only static imports): one import
 * per listed package in `lib/agents/registered.generated.ts` (not committed). Run on `npm install` (postinstall), by
 * `next.config.ts`, `vitest.config.ts` and `npm test`; `npm run agents:generate` runs it by hand. Writes only when the
 * text changes, so a running `next dev` is not restarted for nothing.
 *
 * A package is a module specifier: a path from the repository root (`./examples/invoice-agent`: its package.json's
 * `exports["."]` or `main`, else `index.ts`) or the name of an installed npm package. It exports `agents` (an array of
 * agent definitions: every version it serves) or a default export of one definition or an array of them.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const CONFIG_FILE = "agents.config.json";
export const GENERATED_FILE = "lib/agents/registered.generated.ts";

/** A specifier that names a path (from the repository root) rather than an installed package. */
export function isPathSpecifier(specifier) {
  return specifier.startsWith("./") || specifier.startsWith("../");
}

/** The configured package specifiers (none when there is no config file), or an error naming what is wrong. */
export function readAgentConfig(root = process.cwd()) {
  const file = join(root, CONFIG_FILE);
  if (!existsSync(file)) return [];
  let config;
  try {
    config = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${CONFIG_FILE} is not valid JSON: ${error.message}`);
  }
  const agents = config?.agents;
  if (!Array.isArray(agents) || !agents.every((a) => typeof a === "string" && a.trim() !== "")) {
    throw new Error(
      `${CONFIG_FILE}: "agents" must be a list of module specifiers (a path like "./examples/x" or an npm package name)`,
    );
  }
  const seen = new Set();
  for (const a of agents) {
    if (seen.has(a)) throw new Error(`${CONFIG_FILE}: "${a}" is listed twice`);
    seen.add(a);
  }
  return agents;
}

/** The file a path specifier's package starts at (its `exports["."]`, `main`, or `index.ts`). */
function entryOf(root, specifier) {
  const dir = resolve(root, specifier);
  if (!existsSync(dir)) throw new Error(`${CONFIG_FILE}: ${specifier} does not exist (from ${root})`);
  const manifest = join(dir, "package.json");
  let entry = "index.ts";
  if (existsSync(manifest)) {
    const pkg = JSON.parse(readFileSync(manifest, "utf8"));
    const dot = typeof pkg.exports === "string" ? pkg.exports : pkg.exports?.["."];
    const fromExports = typeof dot === "string" ? dot : (dot?.import ?? dot?.default);
    entry = fromExports ?? pkg.main ?? entry;
  }
  const file = join(dir, entry);
  if (!existsSync(file)) throw new Error(`${CONFIG_FILE}: ${specifier} has no entry file ${entry}`);
  return file;
}

/** The import a generated file in lib/agents/ uses for a specifier. */
function importPath(root, specifier) {
  if (!isPathSpecifier(specifier)) return specifier;
  const rel = relative(join(root, dirname(GENERATED_FILE)), entryOf(root, specifier)).replace(/\\/g, "/");
  return (rel.startsWith(".") ? rel : `./${rel}`).replace(/\.(ts|tsx|mts|js|mjs)$/, "");
}

/** The generated module's text for these specifiers. */
export function registryText(root, specifiers) {
  const lines = [
    `// Generated from ${CONFIG_FILE} by scripts/agents-registry.mjs (on install, build and test): not committed, do not edit.`,
    'import type { AgentPackage } from "@/lib/agents/packages";',
    ...specifiers.map((s, i) => `import * as agentPackage${i} from ${JSON.stringify(importPath(root, s))};`),
    "",
    "/** The agent packages agents.config.json lists, in its order. */",
    `export const AGENT_PACKAGES: AgentPackage[] = [${specifiers
      .map((s, i) => `\n  { specifier: ${JSON.stringify(s)}, module: agentPackage${i} },`)
      .join("")}${specifiers.length ? "\n" : ""}];`,
    "",
  ];
  return lines.join("\n");
}

/** Write the generated registry when its text changes. Returns the specifiers it registers. */
export function writeAgentRegistry(root = process.cwd()) {
  const specifiers = readAgentConfig(root);
  const text = registryText(root, specifiers);
  const file = join(root, GENERATED_FILE);
  if (!existsSync(file) || readFileSync(file, "utf8") !== text) writeFileSync(file, text);
  return specifiers;
}

/** The installed npm packages the config lists (Next transpiles them: an agent package may ship TypeScript). */
export function agentNpmPackages(root = process.cwd()) {
  return readAgentConfig(root).filter((s) => !isPathSpecifier(s));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const specifiers = writeAgentRegistry(resolve(dirname(fileURLToPath(import.meta.url)), ".."));
    console.log(`agents: ${specifiers.length} package(s) from ${CONFIG_FILE} → ${GENERATED_FILE}`);
  } catch (error) {
    console.error(`agents: ${error.message}`);
    process.exit(1);
  }
}
