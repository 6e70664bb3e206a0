#!/usr/bin/env node
/**
 * The server Playwright tests run against: a fresh Postgres database for this run (dropped on exit) — or, with
 * E2E_DATABASE=pglite, a fresh embedded database in a temporary directory (removed on exit), as `npm start` runs —
 * the production build, the offline model with a small token delay (so streaming is visible), short leases (recovery in seconds).
 * Env: E2E_PORT (default 3900), TEST_PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), and for
 * signing in (playwright.config.ts sets them): BETTER_AUTH_SECRET (random when unset), ADMIN_EMAIL and
 * ADMIN_PASSWORD (the first admin), SIGN_IN_RATE_LIMIT (default 10000: the suite signs in many times from one
 * address). NEXT_DIST_DIR (another build directory) passes through.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";

const admin = process.env.TEST_PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const name = `hitl_e2e_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
const port = process.env.E2E_PORT ?? "3900";

async function sql(text) {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

// Databases of earlier runs that were killed before they could clean up: older than an hour and unused.
async function dropStale() {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT datname FROM pg_database d WHERE datname LIKE 'hitl\\_e2e\\_%'
         AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
    );
    for (const { datname } of rows) {
      const created = Number.parseInt(datname.split("_")[2] ?? "", 36);
      if (Number.isFinite(created) && Date.now() - created > 3_600_000) {
        await client.query(`DROP DATABASE IF EXISTS "${datname}"`);
      }
    }
  } finally {
    await client.end();
  }
}

const embedded = process.env.E2E_DATABASE === "pglite";
const pgliteDir = embedded ? mkdtempSync(join(tmpdir(), "hitl-e2e-pglite-")) : "";
if (!embedded) {
  await dropStale().catch((e) => console.error("[e2e] could not drop stale databases:", e.message));
  await sql(`CREATE DATABASE "${name}"`);
}
if (embedded && process.env.E2E_SEED_SQL) {
  // What the specs would insert themselves on Postgres: seeded before the server holds the database.
  const seeded = spawnSync(
    join(process.cwd(), "node_modules", ".bin", "tsx"),
    ["--conditions=react-server", "e2e/support/embedded/seed.ts", process.env.E2E_SEED_SQL],
    { stdio: "inherit", env: { ...process.env, PGLITE_DATA_DIR: join(pgliteDir, "db") } },
  );
  if (seeded.status !== 0) {
    rmSync(pgliteDir, { recursive: true, force: true });
    process.exit(seeded.status ?? 1);
  }
}
const url = new URL(admin);
url.pathname = `/${name}`;
// Specs that must arrange what no API can (a thread pinned to a retired graph version) find the database here
// (not on the embedded database: the server is its only client).
if (process.env.E2E_AUTH_DIR && !embedded) {
  mkdirSync(resolve(process.env.E2E_AUTH_DIR), { recursive: true });
  writeFileSync(join(resolve(process.env.E2E_AUTH_DIR), "database-url.txt"), url.toString());
}
const server = spawn(
  join(process.cwd(), "node_modules", ".bin", "next"),
  // Idle keep-alive sockets stay open longer than the browser's and the test client's: a request sent on a socket the
  // server closes at that moment would get ECONNRESET (seen once under load).
  ["start", "-p", port, "-H", "127.0.0.1", "--keepAliveTimeout", "75000"],
  {
    stdio: "inherit",
    env: {
      ...process.env,
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL: embedded ? "" : url.toString(),
      // The suite pays and mails through the simulators (said, not implied: a deployment must set PAYMENT_URL).
      PAYMENT_SIMULATED: process.env.PAYMENT_SIMULATED ?? "1",
      EMAIL_SIMULATED: process.env.EMAIL_SIMULATED ?? "1",
      ...(embedded ? { PGLITE_DATA_DIR: join(pgliteDir, "db") } : {}),
      OPENAI_API_KEY: "",
      OFFLINE_TOKEN_DELAY_MS: process.env.OFFLINE_TOKEN_DELAY_MS ?? "40",
      RUN_LEASE_MS: "1500",
      RUN_SWEEP_INTERVAL_MS: "300",
      DEMO_THREADS: "false",
      DEMO_USERS: "false",
      RETENTION_SCHEDULE: process.env.RETENTION_SCHEDULE ?? "off",
      BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET || randomBytes(32).toString("hex"),
      ADMIN_EMAIL: process.env.ADMIN_EMAIL ?? "",
      ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? "",
      SIGN_IN_RATE_LIMIT: process.env.SIGN_IN_RATE_LIMIT ?? "10000",
    },
  },
);

let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  server.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 500));
  if (embedded) rmSync(pgliteDir, { recursive: true, force: true });
  else
    await sql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e) =>
      console.error("[e2e] drop failed:", e.message),
    );
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => void stop(0));
server.on("exit", (code) => void stop(code ?? 0));
