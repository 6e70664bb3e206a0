#!/usr/bin/env node
/**
 * `npm test`: everything, in order — lint, typecheck, production build, unit + integration + conformance (vitest), end-to-end
 * (Playwright, when present). Ends with one plain line `N passed, N failed, N skipped` summing every suite, which
 * is the line CI reads. Exits non-zero if anything failed.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

import { writeAgentRegistry } from "./agents-registry.mjs";

const root = process.cwd();
// The agent packages agents.config.json lists (also generated on install; a config changed since counts here).
writeAgentRegistry(root);
const bin = (name) => join(root, "node_modules", ".bin", name);
const reportDir = join(root, "test-results");
rmSync(reportDir, { recursive: true, force: true });
mkdirSync(reportDir, { recursive: true });
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" };

const totals = { passed: 0, failed: 0, skipped: 0 };
const failures = [];
/** Every failed (or flaky) test by name, printed again at the very end: CI keeps only the tail of a long log. */
const failedTests = [];

function run(label, command, args, extraEnv = {}) {
  console.log(`\n── ${label} ──`);
  const started = Date.now();
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...env, ...extraEnv } });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`── ${label}: ${result.status === 0 ? "ok" : "FAILED"} in ${seconds}s`);
  return result.status === 0;
}

/** A step that counts as one test: passed or failed. Returns whether it passed. */
function check(label, command, args, extraEnv = {}) {
  const ok = run(label, command, args, extraEnv);
  if (ok) totals.passed += 1;
  else {
    totals.failed += 1;
    failures.push(label);
  }
  return ok;
}

check("lint (biome)", bin("biome"), ["check", "."]);
const typesOk = check("typecheck (tsc)", bin("tsc"), ["--noEmit"]);

// The HTTP integration tests and the e2e suite run the production server. The build checks types only when tsc
// did not just check the same tree.
check(
  "production build (next build)",
  bin("next"),
  ["build"],
  typesOk ? { NEXT_BUILD_SKIP_TYPECHECK: "1" } : {},
);

const vitestReport = join(reportDir, "vitest.json");
// The fuzz suite sends FUZZ_RUNS hostile requests per route-method: 200 here (10,000 in all over 50 route-methods,
// seeded) makes room in CI for the deploy suites (the previous release's build, the shadow's candidates);
// `npm run test:fuzz` runs the full 1,000.
const vitestOk = run(
  "unit, integration and conformance tests (vitest)",
  bin("vitest"),
  ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${vitestReport}`],
  { FUZZ_RUNS: process.env.FUZZ_RUNS ?? "200" },
);
countVitest(vitestReport, vitestOk, "vitest");

// Production behind a pooler: the HTTP flows, races, kill and restart suites again, every server through PgBouncer in
// transaction mode (e2e/pooler/run.ts, also `npm run test:pooler`).
const poolerReport = join(reportDir, "vitest-pooler.json");
const poolerOk = run(
  "the HTTP suites behind PgBouncer in transaction mode (vitest)",
  bin("tsx"),
  ["--conditions=react-server", "e2e/pooler/run.ts"],
  { POOLER_REPORT: poolerReport },
);
countVitest(poolerReport, poolerOk, "pooler suite");

// Faults below the app under load (e2e/failover/run.ts, also `npm run test:failover`): the database failing over to
// its synchronous standby five times, PgBouncer restarted, the connections run out, a row lock that never returns —
// each scenario one test, with its figures in test-results/failover.json.
const failoverReport = join(reportDir, "failover.json");
const failoverOk = run(
  "faults below the app: failover, pooler restart, connection exhaustion, a locked row",
  bin("tsx"),
  ["--conditions=react-server", "e2e/failover/run.ts"],
  { FAILOVER_REPORT: failoverReport },
);
if (existsSync(failoverReport)) {
  const counts = JSON.parse(readFileSync(failoverReport, "utf8"));
  totals.passed += counts.passed;
  totals.failed += counts.failed;
  for (const scenario of counts.scenarios ?? []) {
    if (!scenario.ok)
      failedTests.push(`failover suite: ${scenario.scenario} › ${scenario.broken.join("; ")}`);
  }
  if (counts.failed > 0 || !failoverOk) failures.push("failover suite");
  if (!failoverOk && counts.failed === 0) totals.failed += 1;
} else {
  totals.failed += 1;
  failures.push("failover suite (no report)");
}

/** Add a vitest JSON report's counts to the totals; a run that failed without a failed test counts as one failure. */
function countVitest(path, ok, label) {
  if (!existsSync(path)) {
    totals.failed += 1;
    failures.push(`${label} (no report)`);
    return;
  }
  const report = JSON.parse(readFileSync(path, "utf8"));
  totals.passed += report.numPassedTests;
  totals.failed += report.numFailedTests;
  totals.skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  if (report.numFailedTests > 0 || !ok) failures.push(label);
  if (!ok && report.numFailedTests === 0) totals.failed += 1;
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status === "failed")
        failedTests.push(`${label}: ${relative(root, file.name)} › ${test.fullName}`);
    }
  }
}

/** The failed and the flaky tests of a Playwright JSON report, by file and title path. */
function playwrightFailures(suite, titles = []) {
  const path = suite.title ? [...titles, suite.title] : titles;
  const out = [];
  for (const spec of suite.specs ?? []) {
    for (const test of spec.tests ?? []) {
      if (test.status === "unexpected" || test.status === "flaky") {
        out.push(
          `${test.status === "flaky" ? "flaky (passed on retry): " : ""}${[...path, spec.title].join(" › ")}`,
        );
      }
    }
  }
  for (const child of suite.suites ?? []) out.push(...playwrightFailures(child, path));
  return out;
}

/**
 * Like `run`, without blocking: the child's output goes through line by line, each line prefixed with `prefix` when
 * given (so two runs at once stay readable). Resolves with whether it passed.
 */
function runConcurrently(label, command, args, extraEnv = {}, prefix = "") {
  console.log(`\n── ${label} (started) ──`);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: prefix ? ["ignore", "pipe", "pipe"] : "inherit",
      env: { ...env, ...extraEnv },
    });
    if (prefix) {
      for (const [from, to] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ]) {
        let rest = "";
        from.setEncoding("utf8");
        from.on("data", (chunk) => {
          const lines = (rest + chunk).split("\n");
          rest = lines.pop() ?? "";
          for (const line of lines) to.write(`${prefix}${line}\n`);
        });
        from.on("end", () => rest && to.write(`${prefix}${rest}\n`));
      }
    }
    child.on("close", (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(`── ${label}: ${code === 0 ? "ok" : "FAILED"} in ${seconds}s`);
      resolve(code === 0);
    });
  });
}

/** One Playwright run (its own port, output and report), added to the totals once it ended. */
async function playwright(label, extraEnv, reportName, prefix = "", args = []) {
  const report = join(reportDir, reportName);
  const ok = await runConcurrently(
    label,
    bin("playwright"),
    ["test", ...args],
    { ...extraEnv, PW_JSON: report },
    prefix,
  );
  if (existsSync(report)) {
    const parsed = JSON.parse(readFileSync(report, "utf8"));
    const stats = parsed.stats;
    for (const suite of parsed.suites ?? []) {
      for (const name of playwrightFailures(suite)) failedTests.push(`${label}: ${name}`);
    }
    totals.passed += stats.expected + (stats.flaky ?? 0);
    totals.failed += stats.unexpected;
    totals.skipped += stats.skipped;
    console.log(
      `── ${label}: ${stats.expected} passed, ${stats.unexpected} failed, ${stats.skipped} skipped`,
    );
    if (stats.unexpected > 0 || !ok) failures.push(label);
    if (!ok && stats.unexpected === 0) totals.failed += 1;
  } else {
    totals.failed += 1;
    failures.push(`${label} (no report)`);
  }
}

/*
 * The embedded default is the product (what `npm start` runs): the operator's-day specs run again against a server
 * on a fresh PGlite database — inbox → approve → email, history → fork, claims, bulk triage, every decision form.
 */
const EMBEDDED_SPECS = [
  "**/inbox.spec.ts",
  "**/history.spec.ts",
  "**/history-edit-fork.spec.ts",
  "**/queue-claims.spec.ts",
  "**/queue-triage.spec.ts",
  "**/thread-decisions.spec.ts",
];

const hasE2e =
  existsSync(join(root, "e2e")) && readdirSync(join(root, "e2e")).some((f) => f.endsWith(".spec.ts"));
if (hasE2e) {
  // The Postgres run in two halves side by side: each its own server, database, port, browser and output (a spec
  // never shares a server with the other half's), one worker each so a spec's timings hold as they do alone. The
  // spec files alternate between the halves in name order, which splits the long console specs evenly (Playwright's
  // own --shard cuts the list in order: its two shards took 11.9 and 7.3 min side by side on 2 cores).
  const specs = readdirSync(join(root, "e2e"))
    .filter((f) => f.endsWith(".spec.ts"))
    .sort();
  await Promise.all(
    [0, 1].map((half) =>
      playwright(
        `end-to-end (playwright, chromium, Postgres, half ${half + 1}/2)`,
        {
          E2E_PORT: String(3900 + half * 2),
          E2E_SPECS: specs
            .filter((_, i) => i % 2 === half)
            .map((f) => `**/${f}`)
            .join(","),
          PW_OUTPUT_DIR: `test-results/e2e-${half + 1}`,
          E2E_AUTH_DIR: join(root, "test-results", `e2e-${half + 1}`, ".auth"),
        },
        `playwright-${half + 1}.json`,
        half === 0 ? "" : "[half 2] ",
      ),
    ),
  );
  await playwright(
    "end-to-end on the embedded database (playwright, chromium, PGlite)",
    {
      E2E_DATABASE: "pglite",
      E2E_PORT: "3901",
      E2E_SPECS: EMBEDDED_SPECS.join(","),
      E2E_SEED_SQL: "e2e/support/embedded/seed.sql",
      // Refunds ORD-1002 a second time in one run: on Postgres each test clears the demo shop's refunds first, which
      // nothing can do on an embedded database the server holds.
      E2E_GREP_INVERT: "approve a smaller amount",
      PW_OUTPUT_DIR: "test-results/e2e-embedded",
      E2E_AUTH_DIR: join(root, "test-results", "e2e-embedded", ".auth"),
    },
    "playwright-embedded.json",
  );
}

if (failures.length > 0) console.log(`\nFailed: ${failures.join(", ")}`);
for (const name of failedTests)
  console.log(`  ${name.includes("flaky (passed on retry)") ? "~" : "✗"} ${name}`);
console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(totals.failed > 0 ? 1 : 0);
