#!/usr/bin/env node
/**
 * `npm start`: the console on the embedded database (or DATABASE_URL when set), production build.
 * Builds first when there is no build or the sources are newer than it, then runs `next start`.
 * PORT (default 3000) and HOSTNAME are honoured.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = process.cwd();
const nextBin = join(root, "node_modules", ".bin", "next");
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

const buildId = join(root, ".next", "BUILD_ID");
const sources = [
  "app",
  "components",
  "lib",
  "public",
  "drizzle",
  "instrumentation.ts",
  "next.config.ts",
  "package.json",
];
const sourceTime = Math.max(...sources.map((s) => newestMtime(join(root, s))));
if (!existsSync(buildId) || statSync(buildId).mtimeMs < sourceTime) {
  console.log("[start] building the console (first start or sources changed)…");
  const build = spawnSync(nextBin, ["build"], { stdio: "inherit", env });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const port = process.env.PORT ?? "3000";
const server = spawn(
  nextBin,
  ["start", "-p", port, ...(process.env.HOSTNAME ? ["-H", process.env.HOSTNAME] : [])],
  {
    stdio: "inherit",
    env,
  },
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
