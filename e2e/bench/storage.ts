/**
 * `npm run bench:storage [-- --threads N]`: what the retention policy saves. On a fresh Postgres database (created and
 * dropped here) real refund threads are made over HTTP by `next start` (finished ones of four shapes, and one paused
 * at the approval), then cloned in SQL into 10,000 threads (every 20th pending) spread over a simulated 90 days. The
 * default policy (RETENTION_* defaults: keep 3 checkpoints after 24 h, compact events after 10 min, archive after 30
 * days) then runs step by step; after each step it prints the bytes per finished thread — checkpoints, events,
 * ledgers (threads, runs, decisions, effects, refunds, outbox) and audit. It checks that no pending thread changed and
 * that every kept history page of a sample still loads. The last line is one JSON object.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { prepareDatabase } from "@/e2e/api/setup";
import { startTestServer, type TestServer } from "@/e2e/support/server";
import { openPostgres } from "@/lib/db/open";
import { defaultRetentionPolicy } from "@/lib/runtime/retention-policy";
import { makeTemplates, runStorageBench, waitForEffects } from "./storage-core";

const at = process.argv.indexOf("--threads");
const total = at > 0 ? Number(process.argv[at + 1]) : 10_000;
if (!Number.isInteger(total) || total < 20) {
  console.error("usage: npm run bench:storage [-- --threads N]   (N ≥ 20, default 10000)");
  process.exit(2);
}
const log = (line: string) => console.log(line);

if (!existsSync(".next/BUILD_ID")) {
  log("building the server (next build)…");
  if (spawnSync("node_modules/.bin/next", ["build"], { stdio: "inherit" }).status !== 0) process.exit(1);
}
const prepared = await prepareDatabase("storage_bench");
const database = openPostgres(prepared.url, { max: 2 });
let server: TestServer | undefined;
try {
  server = await startTestServer({ databaseUrl: prepared.url });
  const templates = await makeTemplates(server.url);
  await waitForEffects(database.sql);
  await server.stop();
  server = undefined;
  const { archiveDir: _dir, ...policy } = defaultRetentionPolicy();
  log(
    `bench:storage — ${total} refund threads (every 20th pending) over 90 simulated days, Postgres; ` +
      `policy ${JSON.stringify(policy)}`,
  );
  log("bytes per finished thread (row bytes + 28 per row), after each policy step:");
  const result = await runStorageBench({
    database,
    templates,
    total,
    days: 90,
    pendingEvery: 20,
    policy,
    historySample: 200,
    log,
  });
  log(
    `steady state: ${result.bytes_per_finished_thread_after} bytes per finished thread, ` +
      `${result.bytes_per_finished_thread_before} before: ratio ${result.ratio} (target ≤ 0.25); ` +
      `${result.archived_threads} archived; pending threads changed: ${result.pending_threads_changed}`,
  );
  console.log(JSON.stringify(result));
  if (result.ratio > 0.25 || result.pending_threads_changed !== 0) process.exitCode = 1;
} finally {
  await server?.stop();
  await database.close();
  await prepared.sql.end();
  await prepared.drop();
}
