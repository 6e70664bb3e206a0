/**
 * `npm run bench:keys [-- --quick] [-- --blocks N] [-- --threads N]`: what sealing personal data under keys costs.
 * One `next start` on a fresh Postgres database runs the refund flow over HTTP (ticket → approval → reply → end) in
 * interleaved blocks: sealed (every checkpoint value and write, event, decision, run input and email of the thread
 * under its subject's key: the default),
 * and in clear — the same server, told by a row in `instances` that an instance of a release that cannot read sealed
 * values is live, which is how the product itself writes during a rolling deploy. Each block's threads are checked to
 * be stored as the block says. Prints CPU per ticket (server + its Postgres backends) and p50 latency per side, and
 * the ratio sealed ÷ clear; the last line is one JSON object.
 */
import pg from "pg";
import { sqlFor } from "@/e2e/api/client";
import { prepareDatabase } from "@/e2e/api/setup";
import { ADMIN_URL } from "@/e2e/support/pg";
import { startTestServer } from "@/e2e/support/server";
import { BENCH_ORDERS_SQL, refundThread } from "./flow";
import { BackendCpu, benchArgs, median, processCpuMs, round } from "./measure";

const args = benchArgs();
const BLOCKS = args.number("--blocks", args.quick ? 4 : 10);
const PER_BLOCK = args.number("--threads", args.quick ? 15 : 30);
const CONCURRENCY = 4;

const prepared = await prepareDatabase("benchkeys");
const sql = sqlFor(prepared.url);
await sql.rows(BENCH_ORDERS_SQL, [6000, BLOCKS * 2 * PER_BLOCK + 20]);
// BENCH_SERVER_PROFILE=<dir>: the server runs under `node --cpu-prof` and writes its profile there when it stops.
const profile = process.env.BENCH_SERVER_PROFILE;
const server = await startTestServer({
  databaseUrl: prepared.url,
  env: { LOG_LEVEL: "warn" },
  ...(profile ? { wrap: [process.execPath, "--cpu-prof", `--cpu-prof-dir=${profile}`] } : {}),
});
const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
const dbName = new URL(prepared.url).pathname.slice(1);

type Side = "sealed" | "clear";
const totals: Record<
  Side,
  { cpuMs: number; serverMs: number; threads: number; latencies: number[]; wrongStorage: number }
> = {
  sealed: { cpuMs: 0, serverMs: 0, threads: 0, latencies: [], wrongStorage: 0 },
  clear: { cpuMs: 0, serverMs: 0, threads: 0, latencies: [], wrongStorage: 0 },
};
let next = 6000;

async function block(side: Side, count: number, measured: boolean) {
  // The product's own switch: a live instance that cannot read sealed values holds sealing (kept 5 s by each server).
  if (side === "clear") {
    await sql.rows(
      `INSERT INTO instances (id, hostname, pid, seen_at) VALUES ('bench-reader', 'bench', 1, now())
       ON CONFLICT (id) DO UPDATE SET seen_at = now(), stopped_at = NULL`,
    );
  } else {
    await sql.rows("UPDATE instances SET stopped_at = now() WHERE id = 'bench-reader'");
  }
  await new Promise((r) => setTimeout(r, 5_500));
  const orders = Array.from({ length: count }, () => `ORD-${next++}`);
  const backend = new BackendCpu(admin, dbName);
  await backend.start();
  const cpu0 = processCpuMs(server.pid);
  const latencies: number[] = [];
  const queue = [...orders];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let order = queue.shift(); order; order = queue.shift()) {
        const t = performance.now();
        await refundThread(server.url, order);
        latencies.push(performance.now() - t);
      }
    }),
  );
  // The server's own CPU and its Postgres backends', apart: where a difference between the sides is.
  const serverMs = processCpuMs(server.pid) - cpu0;
  const cpuMs = serverMs + (await backend.stop());
  // Stored as the side says: every value of its threads sealed, or none — checkpoint values, events, decisions,
  // run inputs, emails, the ticket and the audit trail's words.
  const [stored] = await sql.rows<{ sealed: number; clear: number }>(
    `WITH ts AS (SELECT id FROM threads WHERE customer_order = ANY($1)),
     v AS (
       SELECT b.type LIKE 'sealed:%' AS sealed FROM checkpoint.checkpoint_blobs b
         WHERE b.thread_id IN (SELECT id FROM ts) AND b.type <> 'empty'
       UNION ALL SELECT e.event ? '$sealed' FROM events e WHERE e.thread_id IN (SELECT id FROM ts)
       UNION ALL SELECT d.payload ? '$sealed' FROM decisions d WHERE d.thread_id IN (SELECT id FROM ts)
       UNION ALL SELECT r.input ? '$sealed' FROM runs r WHERE r.thread_id IN (SELECT id FROM ts)
         AND jsonb_typeof(r.input) <> 'null'
       UNION ALL SELECT o.body LIKE 'sealed:v1:%' FROM outbox o WHERE o.thread_id IN (SELECT id FROM ts)
       UNION ALL SELECT t.customer_message LIKE 'sealed:v1:%' FROM threads t WHERE t.id IN (SELECT id FROM ts)
       UNION ALL SELECT a.detail ? '$sealed' FROM audit_log a WHERE a.thread_id IN (SELECT id FROM ts)
         AND a.action = 'run_started')
     SELECT count(*) FILTER (WHERE sealed)::int AS sealed, count(*) FILTER (WHERE NOT sealed)::int AS clear FROM v`,
    [orders],
  );
  const wrong = side === "sealed" ? (stored?.clear ?? 0) : (stored?.sealed ?? 0);
  if (!measured) return;
  const total = totals[side];
  total.cpuMs += cpuMs;
  total.serverMs += serverMs;
  total.threads += count;
  total.latencies.push(...latencies);
  total.wrongStorage += wrong;
  console.log(
    `${side.padEnd(6)} block: ${count} tickets, ${round(cpuMs / count, 1)} ms CPU per ticket (server ${round(serverMs / count, 1)}, database ${round((cpuMs - serverMs) / count, 1)}), p50 ${round(median(latencies), 0)} ms${wrong ? `, ${wrong} values stored the other way` : ""}`,
  );
}

try {
  console.log(
    `warm-up, then ${BLOCKS} interleaved pairs of ${PER_BLOCK} tickets at concurrency ${CONCURRENCY}`,
  );
  await block("sealed", 10, false);
  await block("clear", 10, false);
  for (let i = 0; i < BLOCKS; i++) {
    const order: Side[] = i % 2 === 0 ? ["sealed", "clear"] : ["clear", "sealed"];
    for (const side of order) await block(side, PER_BLOCK, true);
  }
  const per = (side: Side) => totals[side].cpuMs / totals[side].threads;
  const summary = {
    blocks: BLOCKS,
    ticketsPerSide: totals.sealed.threads,
    cpuPerTicketMs: { sealed: round(per("sealed"), 1), clear: round(per("clear"), 1) },
    cpuRatio: round(per("sealed") / per("clear"), 3),
    serverPerTicketMs: {
      sealed: round(totals.sealed.serverMs / totals.sealed.threads, 1),
      clear: round(totals.clear.serverMs / totals.clear.threads, 1),
    },
    p50Ms: {
      sealed: round(median(totals.sealed.latencies), 0),
      clear: round(median(totals.clear.latencies), 0),
    },
    wrongStorage: totals.sealed.wrongStorage + totals.clear.wrongStorage,
  };
  console.log(
    `CPU per ticket sealed ÷ clear: ${summary.cpuRatio}× (${summary.cpuPerTicketMs.sealed} vs ${summary.cpuPerTicketMs.clear} ms)`,
  );
  console.log(JSON.stringify(summary));
  if (summary.wrongStorage > 0) process.exitCode = 1;
} finally {
  await server.stop();
  await admin.end();
  await sql.end();
  await prepared.sql.end();
  await prepared.drop();
}
