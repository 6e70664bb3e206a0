import { defineConfig } from "@playwright/test";

const port = Number(process.env.E2E_PORT ?? 3900);

/**
 * End-to-end tests in Debian's Chromium (Playwright never downloads a browser here) against the production server
 * on a fresh Postgres database (lib/scripts/e2e-server.mjs). `npm run build` must have run (npm test does it).
 */
export default defineConfig({
  testDir: "./e2e",
  testMatch: "**/*.spec.ts",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  outputDir: process.env.PW_OUTPUT_DIR ?? "test-results/e2e",
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
  webServer: {
    command: "node lib/scripts/e2e-server.mjs",
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    stderr: "pipe",
    env: { E2E_PORT: String(port) },
    // SIGTERM and a moment to drop the run's database (the default is an immediate kill).
    gracefulShutdown: { signal: "SIGTERM", timeout: 5_000 },
  },
});
