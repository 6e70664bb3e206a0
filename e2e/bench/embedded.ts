/**
 * `npm run bench:embedded [-- --quick] [-- --threads N] [-- --rounds R]`: the embedded default (no `DATABASE_URL`:
 * PGlite in the server's process) side by side with the same server on Postgres, the refund flow over HTTP at
 * concurrency 1 (create → approval interrupt → approve → reply confirmation → send), with the offline model.
 *
 * Both servers are `next start` of this build, started once and signed in; rounds interleave them (Postgres, PGlite;
 * then PGlite, Postgres; …). Throughput is threads ÷ seconds over all rounds; CPU per thread counts the server's
 * process group (PGlite runs inside it) and, for Postgres, its database's backends. RSS is taken after the last
 * round (default 5 rounds × 100 threads: after 500 threads each): the server's process group, and for Postgres also
 * with its backends' proportional share (PSS, so shared buffers count once). The last line is one JSON object;
 * ratios are PGlite ÷ Postgres. `--cpu-prof <dir>` profiles the PGlite server (written when it stops).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { prepareDatabase } from "@/e2e/api/setup";
import { ADMIN_URL } from "@/e2e/support/pg";
import { startTestServer, type TestServer } from "@/e2e/support/server";
import { migrateDatabase } from "@/lib/db/migrate";
import { openPglite } from "@/lib/db/open";
import { BENCH_ORDERS_SQL, refundThread } from "./flow";
import { BackendCpu, benchArgs, groupUsage, percentile, round } from "./measure";

const args = benchArgs();
const quick = args.quick;
const THREADS = args.number("--threads", quick ? 20 : 100);
const ROUNDS = args.number("--rounds", quick ? 2 : 5);
const WARMUP = 10;
/** `--cpu-prof <dir>`: the PGlite server writes a V8 CPU profile there when it stops. */
const cpuProfDir = args.dir("--cpu-prof");

interface Side {
  name: "postgres" | "pglite";
  server: TestServer;
  /** The database whose backends count (Postgres only). */
  database?: string;
  orders: string[];
}

interface Phase {
  threads: number;
  errors: number;
  seconds: number;
  cpuMs: number;
  dbCpuMs: number;
  legs: number[];
}

async function phase(side: Side, admin: pg.Pool, count: number): Promise<Phase> {
  const backends = side.database ? new BackendCpu(admin, side.database) : undefined;
  await backends?.start();
  const cpu0 = groupUsage(side.server.pid).cpuMs;
  const legs: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  for (const order of side.orders.splice(0, count)) {
    try {
      const s = await refundThread(side.server.url, order);
      legs.push(s.create + s.approve + s.send);
    } catch (error) {
      errors += 1;
      if (errors <= 3) console.error(`  ${side.name} error: ${(error as Error).message.slice(0, 500)}`);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const serverCpu = groupUsage(side.server.pid).cpuMs - cpu0;
  const dbCpuMs = (await backends?.stop()) ?? 0;
  return { threads: legs.length, errors, seconds, cpuMs: serverCpu + dbCpuMs, dbCpuMs, legs };
}

/** Proportional set size (bytes) of a process, from smaps_rollup; 0 when unreadable. */
function pssBytes(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function backendPss(admin: pg.Pool, database: string): Promise<number> {
  const { rows } = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
    [database],
  );
  return rows.reduce((n, r) => n + pssBytes(r.pid), 0);
}

function summary(phases: Phase[]) {
  const threads = phases.reduce((n, p) => n + p.threads, 0);
  const seconds = phases.reduce((n, p) => n + p.seconds, 0);
  const legs = phases.flatMap((p) => p.legs);
  return {
    threads,
    errors: phases.reduce((n, p) => n + p.errors, 0),
    threads_per_s: round(threads / seconds, 2),
    thread_ms: { p50: round(percentile(legs, 50), 1), p95: round(percentile(legs, 95), 1) },
    cpu_ms_per_thread: round(phases.reduce((n, p) => n + p.cpuMs, 0) / Math.max(1, threads), 1),
    db_cpu_ms_per_thread: round(phases.reduce((n, p) => n + p.dbCpuMs, 0) / Math.max(1, threads), 1),
  };
}

// ——— main ———

if (!existsSync(join(process.env.NEXT_DIST_DIR || ".next", "BUILD_ID"))) {
  console.log("building the server (next build)…");
  if (spawnSync("node_modules/.bin/next", ["build"], { stdio: "inherit" }).status !== 0) process.exit(1);
}
const perSide = ROUNDS * THREADS + WARMUP;
const orderIds = () => Array.from({ length: perSide }, (_, i) => `ORD-${2000 + i}`);
const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 2 });
const prepared = await prepareDatabase("benchemb");
const dataRoot = mkdtempSync(join(tmpdir(), "hitl-bench-embedded-"));
const dataDir = join(dataRoot, "pglite");
const sides: Side[] = [];
try {
  await prepared.sql.rows(BENCH_ORDERS_SQL, [2000, perSide]);
  // The embedded database is migrated and stocked here, then closed: the server takes its lock when it starts.
  const embedded = await openPglite(dataDir);
  try {
    await migrateDatabase(embedded);
    await embedded.sql.query(BENCH_ORDERS_SQL, [2000, perSide]);
  } finally {
    await embedded.close();
  }
  // First start on a directory that was never initialized (as `npm run demo` on a new machine): resident memory once
  // healthy and signed in, against the same on the stocked directory below.
  const freshDir = join(dataRoot, "fresh");
  const fresh = await startTestServer({
    databaseUrl: `pglite:${freshDir}`,
    env: { DATABASE_URL: "", PGLITE_DATA_DIR: freshDir },
  });
  const firstStartRss = groupUsage(fresh.pid).rssBytes;
  await fresh.stop();
  const postgres = await startTestServer({ databaseUrl: prepared.url });
  sides.push({
    name: "postgres",
    server: postgres,
    database: new URL(prepared.url).pathname.slice(1),
    orders: orderIds(),
  });
  const pglite = await startTestServer({
    // The sign-in helper keys its test users by this string; the server itself gets no DATABASE_URL.
    databaseUrl: `pglite:${dataDir}`,
    env: { DATABASE_URL: "", PGLITE_DATA_DIR: dataDir },
    ...(cpuProfDir ? { wrap: [process.execPath, "--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] } : {}),
  });
  sides.push({ name: "pglite", server: pglite, orders: orderIds() });
  const startRss = groupUsage(pglite.pid).rssBytes;
  console.log(
    `bench:embedded — ${ROUNDS} rounds × ${THREADS} threads per server at concurrency 1 (after ${WARMUP} warm-up), ` +
      `offline model; Postgres on ${postgres.url}, PGlite (${dataDir}) on ${pglite.url}`,
  );
  for (const side of sides) await phase(side, admin, WARMUP);
  const phases: Record<Side["name"], Phase[]> = { postgres: [], pglite: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    const line: string[] = [];
    for (const side of order) {
      const p = await phase(side, admin, THREADS);
      phases[side.name].push(p);
      line.push(
        `${side.name} ${round(p.threads / p.seconds, 2)} threads/s, ${round(p.cpuMs / Math.max(1, p.threads), 1)} ms CPU/thread` +
          (p.errors ? `, ${p.errors} errors` : ""),
      );
    }
    console.log(`round ${r + 1}/${ROUNDS}: ${line.join("; ")}`);
  }
  const [pgSide, liteSide] = sides as [Side, Side];
  const pgRss = groupUsage(pgSide.server.pid).rssBytes;
  const pgBackends = await backendPss(admin, pgSide.database as string);
  const liteRss = groupUsage(liteSide.server.pid).rssBytes;
  const ours = { postgres: summary(phases.postgres), pglite: summary(phases.pglite) };
  const mb = (b: number) => round(b / 2 ** 20, 0);
  for (const name of ["postgres", "pglite"] as const) {
    const s = ours[name];
    console.log(
      `${name.padEnd(8)}: ${s.threads_per_s} threads/s; thread p50 ${s.thread_ms.p50} / p95 ${s.thread_ms.p95} ms; ` +
        `CPU ${s.cpu_ms_per_thread} ms/thread` +
        (name === "postgres" ? ` (of which backends ${s.db_cpu_ms_per_thread})` : "") +
        `; errors ${s.errors}`,
    );
  }
  const threadsEach = ours.postgres.threads + WARMUP;
  console.log(
    `RSS after ${threadsEach} threads each: PGlite server ${mb(liteRss)} MB; Postgres-mode server ${mb(pgRss)} MB ` +
      `(+ its backends' PSS ${mb(pgBackends)} MB)`,
  );
  console.log(
    `PGlite server once started and signed in: ${mb(startRss)} MB on an initialized directory, ` +
      `${mb(firstStartRss)} MB on a new one (first start, initdb included)`,
  );
  const ratioThroughput = round(ours.pglite.threads_per_s / ours.postgres.threads_per_s, 2);
  const ratioRss = round(liteRss / pgRss, 2);
  const errors = ours.postgres.errors + ours.pglite.errors;
  console.log(
    `targets: throughput at concurrency 1 ≥ 0.8× Postgres: ${ratioThroughput} ${ratioThroughput >= 0.8 ? "met" : "MISSED"}; ` +
      `RSS ≤ 1.3×: ${ratioRss} ${ratioRss <= 1.3 ? "met" : "MISSED"}; errors ${errors}`,
  );
  console.log(
    JSON.stringify({
      bench: "embedded",
      rounds: ROUNDS,
      threads_per_round: THREADS,
      threads_each: threadsEach,
      postgres: ours.postgres,
      pglite: ours.pglite,
      rss_mb: {
        pglite: mb(liteRss),
        postgres_server: mb(pgRss),
        postgres_backends_pss: mb(pgBackends),
        pglite_started: mb(startRss),
        pglite_first_start: mb(firstStartRss),
      },
      ratio_throughput_c1: ratioThroughput,
      ratio_cpu_per_thread: round(ours.pglite.cpu_ms_per_thread / ours.postgres.cpu_ms_per_thread, 2),
      ratio_rss: ratioRss,
      ratio_rss_with_database: round(liteRss / (pgRss + pgBackends), 2),
      errors,
    }),
  );
} finally {
  await Promise.all(sides.map((s) => s.server.stop()));
  await admin.end();
  await prepared.sql.end();
  await prepared.drop();
  rmSync(dataRoot, { recursive: true, force: true });
}
