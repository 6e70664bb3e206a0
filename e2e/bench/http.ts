/**
 * `npm run bench:http [-- --threads N] [-- --quick]`: the refund flow over HTTP against `next start` on a fresh
 * Postgres database with the offline model (no token delay). Per thread: create the ticket and run it to the approval
 * interrupt, resume (approve) to the email confirmation, resume (send) to the end. Runs at concurrency 1 and 20 and
 * prints throughput, p50/p95 of each leg, and errors; the last line is one JSON object.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { sqlFor } from "@/e2e/api/client";
import { prepareDatabase } from "@/e2e/api/setup";
import { startTestServer, type TestServer } from "@/e2e/support/server";
import { BENCH_ORDERS_SQL, type FlowSample, refundThread } from "./flow";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const threadsArg = args.indexOf("--threads");
const N = threadsArg >= 0 ? Number(args[threadsArg + 1]) : quick ? 40 : 200;

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0) * 10) / 10
  );
}

async function phase(base: string, orders: string[], concurrency: number) {
  const samples: FlowSample[] = [];
  let errors = 0;
  const queue = [...orders];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let order = queue.shift(); order; order = queue.shift()) {
        try {
          samples.push(await refundThread(base, order));
        } catch (error) {
          errors += 1;
          if (errors <= 3) console.error(`  error: ${(error as Error).message}`);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const leg = (k: keyof FlowSample) => ({
    p50: pct(
      samples.map((s) => s[k]),
      50,
    ),
    p95: pct(
      samples.map((s) => s[k]),
      95,
    ),
  });
  return {
    concurrency,
    threads: samples.length,
    errors,
    threads_per_s: Math.round((samples.length / seconds) * 10) / 10,
    create_to_interrupt_ms: leg("create"),
    resume_to_finished_ms: leg("approve"),
    confirm_to_finished_ms: leg("send"),
  };
}

if (!existsSync(".next/BUILD_ID")) {
  console.log("building the server (next build)…");
  if (spawnSync("node_modules/.bin/next", ["build"], { stdio: "inherit" }).status !== 0) process.exit(1);
}
const total = N * 2 + 10;
const prepared = await prepareDatabase("bench", { prefix: "ORD-", count: 0 });
const sql = sqlFor(prepared.url);
await sql.rows(BENCH_ORDERS_SQL, [2000, total]);
let server: TestServer | undefined;
try {
  server = await startTestServer({ databaseUrl: prepared.url, env: { DATABASE_POOL_MAX: "20" } });
  const ids = Array.from({ length: total }, (_, i) => `ORD-${2000 + i}`);
  console.log(`bench:http — ${N} threads per phase, offline model, Postgres, next start on ${server.url}`);
  await phase(server.url, ids.splice(0, 10), 2); // warm-up
  const seq = await phase(server.url, ids.splice(0, N), 1);
  const conc = await phase(server.url, ids.splice(0, N), 20);
  for (const p of [seq, conc]) {
    console.log(
      `concurrency ${String(p.concurrency).padStart(2)}: ${p.threads_per_s} threads/s, errors ${p.errors}; ` +
        `create→interrupt p50 ${p.create_to_interrupt_ms.p50} / p95 ${p.create_to_interrupt_ms.p95} ms; ` +
        `resume→RUN_FINISHED p50 ${p.resume_to_finished_ms.p50} / p95 ${p.resume_to_finished_ms.p95} ms; ` +
        `confirm→RUN_FINISHED p50 ${p.confirm_to_finished_ms.p50} / p95 ${p.confirm_to_finished_ms.p95} ms`,
    );
  }
  const target = seq.resume_to_finished_ms.p95 <= 40 && seq.errors + conc.errors === 0;
  console.log(
    `target (resume→RUN_FINISHED p95 ≤ 40 ms at concurrency 1, errors 0): ${target ? "met" : "MISSED"}`,
  );
  console.log(
    JSON.stringify({
      bench: "http",
      threads_per_phase: N,
      sequential: seq,
      concurrent: conc,
      target_met: target,
    }),
  );
} finally {
  await server?.stop();
  await sql.end();
  await prepared.sql.end();
  await prepared.drop();
}
