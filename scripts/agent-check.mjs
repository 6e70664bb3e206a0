#!/usr/bin/env node
/**
 * `npm run agent:check <id>`: the suites generated over the registry, for one agent — the registry and structure checks
 * (every question it asks can be labelled, summarized, bulk-decided or refused; its declared structure hash), then the
 * generated policy and flow suites (e2e/agents/: every question its example tickets reach × every principal × every
 * answer through every route; interrupt, refresh, second click, SIGKILL and restart, on PGlite and Postgres). Builds
 * the app first (`--no-build` to reuse the last build). Needs the test Postgres (DATABASE_ADMIN_URL or 127.0.0.1:5432).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readAgentConfig, writeAgentRegistry } from "./agents-registry.mjs";

const root = process.cwd();
const args = process.argv.slice(2);
const id = args.find((a) => !a.startsWith("--"));
if (!id) {
  console.error("usage: npm run agent:check -- <agent id> [--no-build]");
  process.exit(2);
}
writeAgentRegistry(root);
const bin = (name) => join(root, "node_modules", ".bin", name);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", AGENT_CHECK: id };

function step(label, command, commandArgs) {
  console.log(`\n── ${label} ──`);
  const result = spawnSync(command, commandArgs, { stdio: "inherit", env });
  if (result.status !== 0) {
    console.error(`agent:check ${id}: ${label} failed`);
    process.exit(1);
  }
}

console.log(`agent:check ${id} (packages: ${readAgentConfig(root).join(", ") || "none"})`);
if (!args.includes("--no-build") || !existsSync(join(root, ".next", "BUILD_ID"))) {
  step("production build", bin("next"), ["build"]);
}
step("registry and structure", bin("vitest"), [
  "run",
  "--project",
  "unit",
  "lib/agents/registry.test.ts",
  "lib/agents/structure.test.ts",
]);
step("generated policy and flow suites", bin("vitest"), ["run", "--project", "int", "e2e/agents"]);
console.log(`\nagent:check ${id}: passed`);
