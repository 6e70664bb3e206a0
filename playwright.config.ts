import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { defineConfig } from "@playwright/test";
import { storageStatePath } from "./e2e/auth/users";

const port = Number(process.env.E2E_PORT ?? 3900);

/*
 * One run's sign-in secrets, made once: the config is evaluated first in the main process, which starts the server
 * (webServer) and the workers; both inherit these from its environment, so every evaluation sees the same values.
 */
const outputDir = process.env.PW_OUTPUT_DIR ?? "test-results/e2e";
process.env.E2E_AUTH_DIR ??= resolve(outputDir, ".auth");
process.env.BETTER_AUTH_SECRET ??= randomBytes(32).toString("hex");
process.env.ADMIN_EMAIL ??= "admin@e2e.local";
// The data keys personal data is sealed under (the server refuses to start on Postgres without them).
process.env.DATA_MASTER_KEY ??= `e2e:${randomBytes(32).toString("base64")}`;
process.env.DATA_INDEX_KEY ??= randomBytes(32).toString("base64");
process.env.ADMIN_PASSWORD ??= `e2e-${randomBytes(16).toString("hex")}`;
const authEnv = {
  BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET,
  ADMIN_EMAIL: process.env.ADMIN_EMAIL,
  ADMIN_PASSWORD: process.env.ADMIN_PASSWORD,
};

/**
 * End-to-end tests in Debian's Chromium (Playwright never downloads a browser here) against the production server
 * on a fresh Postgres database, or with E2E_DATABASE=pglite on a fresh embedded one (scripts/e2e-server.mjs). `npm run build` must have run (npm test does it).
 * The `setup` project signs in one user per role (e2e/auth/setup.ts); the tests run as the supervisor unless they
 * pick another storage state.
 */
export default defineConfig({
  testDir: "./e2e",
  testMatch: "**/*.spec.ts",
  fullyParallel: false,
  workers: 1,
  // On CI a test that fails is run once more; one that then passes is reported as flaky by name at the end of
  // `npm test` (scripts/test.mjs), never hidden. Locally every failure stands.
  retries: process.env.CI ? 1 : 0,
  // E2E_GREP_INVERT leaves out tests by title (the embedded run: tests that must reset the shop's refunds directly).
  ...(process.env.E2E_GREP_INVERT ? { grepInvert: new RegExp(process.env.E2E_GREP_INVERT) } : {}),
  timeout: 60_000,
  expect: { timeout: 10_000 },
  outputDir,
  reporter: [["list"], ["json", { outputFile: process.env.PW_JSON ?? "test-results/playwright.json" }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  projects: [
    { name: "setup", testMatch: /auth[\\/]setup\.ts$/ },
    {
      name: "chromium",
      // E2E_SPECS (comma-separated globs) narrows the run, e.g. to the operator's-day specs on the embedded database.
      testMatch: process.env.E2E_SPECS ? process.env.E2E_SPECS.split(",") : "**/*.spec.ts",
      dependencies: ["setup"],
      use: { storageState: storageStatePath("supervisor") },
    },
  ],
  webServer: {
    command: "node scripts/e2e-server.mjs",
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    stderr: "pipe",
    env: {
      E2E_PORT: String(port),
      // `pglite`: the server runs on a fresh embedded database, as `npm start` does (scripts/e2e-server.mjs).
      E2E_DATABASE: process.env.E2E_DATABASE ?? "postgres",
      ...(process.env.E2E_SEED_SQL ? { E2E_SEED_SQL: process.env.E2E_SEED_SQL } : {}),
      ...authEnv,
      SIGN_IN_RATE_LIMIT: "10000",
      // Deadlines are tested with policies of a few seconds: look for overdue items often.
      DEADLINE_SWEEP_MS: "300",
    },
    // SIGTERM and a moment to drop the run's database (the default is an immediate kill).
    gracefulShutdown: { signal: "SIGTERM", timeout: 5_000 },
  },
});
