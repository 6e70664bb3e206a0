/**
 * `npm run bench:storage [-- --threads N]`: what the retention policy saves. On a fresh Postgres database (created and
 * dropped here) real refund threads are made over HTTP by `next start` (finished ones of four shapes, and one paused
 * at the approval), then cloned in SQL into 10,000 threads (every 20th pending) spread over a simulated 90 days. The
 * default policy (RETENTION_* defaults: keep 3 checkpoints after 24 h, compact events after 10 min, archive after 30
 * days) then runs step by step; after each step it prints the bytes per finished thread — checkpoints, events,
 * ledgers (threads, runs, decisions, effects, refunds, outbox) and audit. It checks that no pending thread changed and
 * that every kept history page of a sample still loads. Then the scheduled path (`--path scheduled`, or `both`, the
 * default): the same on a second fresh database, but nobody calls the policy — a server started with a short
 * RETENTION_SCHEDULE applies it by itself, and the bench measures what its own run left. The two ratios are printed
 * side by side. The last line is one JSON object.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { prepareDatabase } from "@/e2e/api/setup";
import { startTestServer, type TestServer } from "@/e2e/support/server";
import { openPostgres } from "@/lib/db/open";
import { defaultRetentionPolicy } from "@/lib/runtime/retention/retention-policy";
import {
  makeTemplates,
  runScheduledStorageBench,
  runStorageBench,
  type StorageBenchResult,
  waitForEffects,
} from "./storage-core";

const at = process.argv.indexOf("--threads");
const total = at > 0 ? Number(process.argv[at + 1]) : 10_000;
if (!Number.isInteger(total) || total < 20) {
  console.error("usage: npm run bench:storage [-- --threads N]   (N ≥ 20, default 10000)");
  process.exit(2);
}
const log = (line: string) => console.log(line);
const pathAt = process.argv.indexOf("--path");
const path = pathAt > 0 ? process.argv[pathAt + 1] : "both";
if (path !== "direct" && path !== "scheduled" && path !== "both") {
  console.error("usage: npm run bench:storage [-- --threads N] [--path direct|scheduled|both]");
  process.exit(2);
}

if (!existsSync(".next/BUILD_ID")) {
  log("building the server (next build)…");
  if (spawnSync("node_modules/.bin/next", ["build"], { stdio: "inherit" }).status !== 0) process.exit(1);
}
const { archiveDir: _dir, ...policy } = defaultRetentionPolicy();
log(
  `bench:storage — ${total} refund threads (every 20th pending) over 90 simulated days, Postgres; ` +
    `policy ${JSON.stringify(policy)}; path ${path}`,
);

/** A fresh database with the template threads made over HTTP by a real server (stopped again). */
async function freshWithTemplates(prefix: string) {
  const prepared = await prepareDatabase(prefix);
  const database = openPostgres(prepared.url, { max: 2 });
  const server = await startTestServer({ databaseUrl: prepared.url });
  try {
    const templates = await makeTemplates(server.url);
    await waitForEffects(database.sql);
    return { prepared, database, templates };
  } finally {
    await server.stop();
  }
}

const shape = { total, days: 90, pendingEvery: 20, historySample: 200, log };
const results: Record<string, StorageBenchResult> = {};
const summary = (r: StorageBenchResult) =>
  `${r.bytes_per_finished_thread_after} bytes per finished thread, ${r.bytes_per_finished_thread_before} before: ` +
  `ratio ${r.ratio} (target ≤ 0.25); ${r.archived_threads} archived; pending threads changed: ${r.pending_threads_changed}`;

if (path !== "scheduled") {
  const { prepared, database, templates } = await freshWithTemplates("storage_bench");
  try {
    log("direct path — bytes per finished thread (row bytes + 28 per row), after each policy step:");
    results.direct = await runStorageBench({ database, templates, policy, ...shape });
    log(`direct path: ${summary(results.direct)}`);
  } finally {
    await database.close();
    await prepared.sql.end();
    await prepared.drop();
  }
}
if (path !== "direct") {
  const { prepared, database, templates } = await freshWithTemplates("storage_sched");
  let server: TestServer | undefined;
  try {
    log(
      "scheduled path — nobody calls the policy: the server's own schedule (RETENTION_SCHEDULE=2s) applies it",
    );
    const scheduled = await runScheduledStorageBench({
      database,
      templates,
      ...shape,
      serveWithSchedule: async (archiveDir) => {
        server = await startTestServer({
          databaseUrl: prepared.url,
          env: { RETENTION_SCHEDULE: "2s", RETENTION_ARCHIVE_DIR: archiveDir },
        });
        return async () => {
          await server?.stop();
          server = undefined;
        };
      },
    });
    results.scheduled = scheduled;
    log(`scheduled path: ${summary(scheduled)}; the run took ${scheduled.scheduled_run_seconds} s`);
  } finally {
    await server?.stop();
    await database.close();
    await prepared.sql.end();
    await prepared.drop();
  }
}
if (results.direct && results.scheduled) {
  log(
    `side by side: direct ${results.direct.bytes_per_finished_thread_after} vs scheduled ` +
      `${results.scheduled.bytes_per_finished_thread_after} bytes per finished thread ` +
      `(scheduled / direct = ${(results.scheduled.bytes_per_finished_thread_after / results.direct.bytes_per_finished_thread_after).toFixed(3)})`,
  );
}
console.log(JSON.stringify(results));
for (const r of Object.values(results)) {
  if (r.ratio > 0.25 || r.pending_threads_changed !== 0) process.exitCode = 1;
}
