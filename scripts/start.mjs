#!/usr/bin/env node
/**
 * `npm start`: the console on the embedded database (or DATABASE_URL when set), production build.
 * Builds first when there is no build or the sources are newer than it, then runs `next start` and waits until
 * /api/health answers, saying at each step what it is doing and for how long (a first start on 2 cores takes minutes:
 * nobody should stare at a silent terminal). PORT (default 3000) is honoured; the embedded demo listens on 127.0.0.1
 * unless HOST (or HOSTNAME) says otherwise, since its demo users share one password; with DATABASE_URL, `next start`'s
 * own default applies unless HOST says otherwise.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = process.cwd();
const nextBin = join(root, "node_modules", ".bin", "next");
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
const say = (line) => console.log(`[start] ${line}`);

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Run `next build`, naming its phase and the time so far every 15 s while it is quiet. */
function build() {
  return new Promise((resolve) => {
    say(
      "step 1 of 3: building the console (first start or sources changed; about 1.5–2 minutes on 2 cores)…",
    );
    let phase = "compiling";
    const child = spawn(nextBin, ["build"], { stdio: ["ignore", "pipe", "pipe"], env });
    const onData = (chunk) => {
      const text = String(chunk);
      process.stdout.write(text);
      if (text.includes("Compiled")) phase = "type-checking";
      if (text.includes("Collecting page data")) phase = "collecting page data";
      if (text.includes("Generating static pages")) phase = "generating pages";
      if (text.includes("Finalizing")) phase = "finalizing";
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (chunk) => process.stderr.write(chunk));
    const ticker = setInterval(() => say(`  still building (${phase}), ${elapsed()} so far…`), 15_000);
    child.on("exit", (code) => {
      clearInterval(ticker);
      resolve(code ?? 1);
    });
  });
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
  const code = await build();
  if (code !== 0) process.exit(code);
  say(`built in ${elapsed()}.`);
} else {
  say("step 1 of 3: the build is up to date.");
}

const embedded = !process.env.DATABASE_URL?.trim();
const host = process.env.HOST || process.env.HOSTNAME || (embedded ? "127.0.0.1" : undefined);
const port = process.env.PORT ?? "3000";
say(
  embedded
    ? "step 2 of 3: starting the server on the embedded database (a first start creates it, migrates it and seeds the demo)…"
    : "step 2 of 3: starting the server on DATABASE_URL (migrations apply on start)…",
);
// The server's output goes through this process: when whoever reads ours is gone (`npm start | cat`, the `cat` ended
// by Ctrl-C), the server's own output never breaks — this process drops the lines and the server stops as asked.
const server = spawn(nextBin, ["start", "-p", port, ...(host ? ["-H", host] : [])], {
  stdio: ["ignore", "pipe", "pipe"],
  env,
});
let outputGone = false;
for (const [from, to] of [
  [server.stdout, process.stdout],
  [server.stderr, process.stderr],
]) {
  to.on("error", () => {
    outputGone = true;
  });
  from.on("data", (chunk) => {
    if (!outputGone) to.write(chunk);
  });
}
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

/**
 * Stop the server: the signal once (it drains: runs finish or are handed over, the embedded database is closed and its
 * lock released), then, if it has not exited within its drain's bound, for good.
 */
let stopping = false;
function stop(signal) {
  if (stopping) return;
  stopping = true;
  server.kill(signal);
  const graceMs = Number(process.env.SHUTDOWN_GRACE_MS ?? 8_000) + 15_000;
  setTimeout(() => {
    console.error(`[start] the server did not stop within ${Math.round(graceMs / 1000)} s: ending it.`);
    server.kill("SIGKILL");
  }, graceMs).unref();
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"])
  process.on(signal, () => stop(signal === "SIGHUP" ? "SIGTERM" : signal));
// npm and its shell may end without passing a SIGTERM on (`kill <npm's pid>`): a parent that is gone stops us too.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop("SIGTERM");
}, 500).unref();

// Step 3: wait for the first healthy answer, and say where the console is.
const url = `http://${host && host !== "0.0.0.0" && host !== "::" ? host : "127.0.0.1"}:${port}`;
say("step 3 of 3: waiting for the server to answer healthy…");
let last = "";
for (let tick = 0; ; tick++) {
  try {
    const res = await fetch(`${url}/api/health`);
    if (res.ok) break;
    const body = await res.json().catch(() => ({}));
    last = body.reason ?? `status ${res.status}`;
  } catch {
    last = "not listening yet";
  }
  if (tick % 20 === 19)
    say(`  step 3 of 3: waiting for the server to be healthy (${last}), ${elapsed()} so far…`);
  await new Promise((r) => setTimeout(r, 500));
}
say(`ready in ${elapsed()}: ${url}${embedded ? "  (demo sign-ins: cat .data/demo-credentials)" : ""}`);
