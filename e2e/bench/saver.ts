/**
 * Checkpointer benchmark: our DrizzleCheckpointSaver vs the official PostgresSaver vs MemorySaver, on a refund-shaped
 * graph with a human-review interrupt. One process, one fresh Postgres database (dropped at the end, also on error
 * and on Ctrl-C). Progress goes to stderr; stdout is the report, and its last line is one JSON object.
 *
 *   npm run bench:saver            full run (several minutes)
 *   npm run bench:saver -- --quick  smoke run (about a minute)
 *
 * Durability is LangGraph's default ("async": a step's checkpoint is written while the next step runs, and every
 * write is awaited before `invoke` returns), the same for all three savers. The server's own settings are left alone
 * (fsync / synchronous_commit are read and printed, never changed; every table is logged).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { AIMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  copyCheckpoint,
  MemorySaver,
  type PendingWrite,
  uuid6,
} from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { CountingSqlClient } from "@/e2e/support/counting-sql-client";
import { createTestDatabase } from "@/e2e/support/pg";
import { listCheckpointHistory } from "@/lib/checkpoint/history";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import { SELECT_TUPLE_BY_ID } from "@/lib/checkpoint/sql";
import { migrateDatabase } from "@/lib/db/migrate";
import { type Database, openPostgres } from "@/lib/db/open";
import {
  type CallCounts,
  countPoolStatements,
  countSaverCalls,
  diffCounts,
  fmt,
  median,
  percentile,
  perThread,
  processCpuMs,
  type RunResult,
  round,
  runPool,
  sample,
  systemBusyMs,
  table,
  totalCalls,
} from "./measure";
import { buildRefundGraph, type RefundGraph, runRefundThread, type ThreadPhase } from "./refund-graph";

const QUICK = process.argv.includes("--quick");

const SETTINGS = QUICK
  ? {
      reps: 3,
      warmupThreads: 20,
      seqThreads: 40,
      concThreads: 200,
      concurrency: 20,
      rawCycles: 300,
      fillTarget: 20_000,
      longThread: 300,
      readSamples: 300,
      readWarmup: 30,
    }
  : {
      reps: 5,
      warmupThreads: 60,
      seqThreads: 200,
      concThreads: 600,
      concurrency: 20,
      rawCycles: 1000,
      fillTarget: 100_000,
      longThread: 300,
      readSamples: 1000,
      readWarmup: 50,
    };
const POOL_SIZE = 20;
const OFFICIAL_SCHEMA = "official";
/** Our saver's tables live in a schema of their own (migration 0033). */
const OURS_SCHEMA = "checkpoint";
const HISTORY_PAGE = 50;

type Key = "memory" | "official" | "ours";

interface Entry {
  key: Key;
  label: string;
  saver: BaseCheckpointSaver;
  graph: RefundGraph;
  calls: CallCounts;
  /** Statements sent so far (NaN for the in-memory saver). */
  statements: () => number;
  /** `application_name` of its pool's connections (for the server-side CPU figure); null for the memory saver. */
  appName: string | null;
  seq: RunResult[];
  conc: RunResult[];
  /**
   * Per run, parallel to `seq` and `conc`: CPU ms of this Node process, of the saver's Postgres backends, and of
   * everything else on the machine (other processes: the bench cannot keep them away, it can only show them).
   */
  cpu: Record<"seq" | "conc", { node: number; pg: number; other: number }[]>;
  threadsMeasured: number;
  statementsMeasured: number;
  callsMeasured: CallCounts;
}

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const zeroCalls = (): CallCounts => ({ getTuple: 0, put: 0, putWrites: 0, list: 0 });
const addCalls = (a: CallCounts, b: CallCounts): CallCounts => ({
  getTuple: a.getTuple + b.getTuple,
  put: a.put + b.put,
  putWrites: a.putWrites + b.putWrites,
  list: a.list + b.list,
});
const rotate = <T>(items: readonly T[], by: number): T[] =>
  items.map((_, i) => items[(i + by) % items.length]!);
const rate = (run: RunResult) => (run.threads / run.elapsedMs) * 1000;
/** Median over reps of each rep's items/s: one rep disturbed by something else on the machine does not move it. */
const throughput = (runs: readonly RunResult[]) => median(runs.map(rate));
/** All items over all time. */
const pooledThroughput = (runs: readonly RunResult[]) =>
  runs.reduce((s, r) => s + r.threads, 0) / (runs.reduce((s, r) => s + r.elapsedMs, 0) / 1000);
/** Median over reps of a / b, each rep's two runs having run back to back. */
const pairedRatio = (a: readonly RunResult[], b: readonly RunResult[]) =>
  median(a.map((run, i) => rate(run) / rate(b[i]!)));
const latencies = (runs: readonly RunResult[]) => runs.flatMap((r) => r.latencies);

function packageVersion(name: string): string {
  try {
    const file = join(process.cwd(), "node_modules", name, "package.json");
    return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Lifecycle: one database, dropped however the process ends.

let dropDatabase: (() => Promise<void>) | null = null;
const pools: pg.Pool[] = [];

async function teardown(): Promise<void> {
  await Promise.allSettled(pools.splice(0).map((pool) => pool.end()));
  const drop = dropDatabase;
  dropDatabase = null;
  if (drop) await drop();
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: dropping the bench database`);
    const drop = dropDatabase;
    dropDatabase = null;
    // DROP ... WITH (FORCE) ends the pools' connections; the pools' error listeners absorb that.
    void (drop ? drop() : Promise.resolve())
      .catch((error: unknown) => log(`drop failed: ${String(error)}`))
      .finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<Record<string, unknown>> {
  const startedAt = Date.now();
  const testDb = await createTestDatabase("bench");
  dropDatabase = testDb.drop;
  log(`database ${testDb.name} (${QUICK ? "quick" : "full"} run)`);

  const withAppName = (name: string) => {
    const url = new URL(testDb.url);
    url.searchParams.set("application_name", name);
    return url.toString();
  };
  // Bench bookkeeping (sizes, fills, pids) runs on its own pool, so it never shows in a saver's statement count.
  const adminPool = new pg.Pool({ connectionString: withAppName("bench_admin"), max: 2 });
  adminPool.on("error", (error) => log(`admin pool idle client error: ${error.message}`));
  pools.push(adminPool);
  const admin = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    (await adminPool.query<R>(text, values)).rows;

  const database: Database = openPostgres(withAppName("bench_ours"), { max: POOL_SIZE });
  const oursPool = database.pool!;
  pools.push(oursPool);
  // Keep both saver pools' connections open between runs (pg closes idle ones after 10 s by default), so no
  // measured run pays for reconnecting and the backends whose CPU is read stay the same.
  (oursPool as unknown as { options: { idleTimeoutMillis: number } }).options.idleTimeoutMillis = 0;
  const oursWire = countPoolStatements(oursPool);
  await migrateDatabase(database);

  const officialPool = new pg.Pool({
    connectionString: withAppName("bench_official"),
    max: POOL_SIZE,
    idleTimeoutMillis: 0,
  });
  officialPool.on("error", (error) => log(`official pool idle client error: ${error.message}`));
  pools.push(officialPool);
  const officialWire = countPoolStatements(officialPool);
  const official = new PostgresSaver(officialPool, undefined, { schema: OFFICIAL_SCHEMA });
  await official.setup();

  const backendCpu = async (appName: string | null): Promise<Map<number, number>> => {
    const cpu = new Map<number, number>();
    if (appName === null) return cpu;
    const rows = await admin<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
      [appName],
    );
    for (const { pid } of rows) cpu.set(pid, processCpuMs(pid));
    return cpu;
  };
  const cpuSpent = (before: Map<number, number>, after: Map<number, number>) => {
    let ms = 0;
    for (const [pid, value] of after) ms += value - (before.get(pid) ?? 0);
    return ms;
  };
  const [server] = await admin<{ version: string; fsync: string; sync: string }>(
    "SELECT version() AS version, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync",
  );

  const counting = new CountingSqlClient(database.sql);
  const ours = new DrizzleCheckpointSaver(counting);
  const memory = new MemorySaver();

  const makeEntry = (
    key: Key,
    label: string,
    saver: BaseCheckpointSaver,
    statements: () => number,
    appName: string | null,
  ): Entry => ({
    key,
    label,
    saver,
    appName,
    cpu: { seq: [], conc: [] },
    calls: countSaverCalls(saver),
    graph: buildRefundGraph(saver),
    statements,
    seq: [],
    conc: [],
    threadsMeasured: 0,
    statementsMeasured: 0,
    callsMeasured: zeroCalls(),
  });
  const entries: Entry[] = [
    makeEntry("memory", "MemorySaver", memory, () => Number.NaN, null),
    makeEntry(
      "official",
      "PostgresSaver (official)",
      official,
      () => officialWire.statements,
      "bench_official",
    ),
    makeEntry("ours", "DrizzleCheckpointSaver (ours)", ours, () => counting.statements, "bench_ours"),
  ];
  const byKey = (key: Key) => entries.find((e) => e.key === key)!;
  const resetMemory = () => {
    memory.storage = Object.create(null);
    memory.writes = Object.create(null);
  };

  // --- warm-up (JIT, prepared statements, pool connections) --------------------------------------------------
  for (const entry of entries) {
    await runPool(SETTINGS.warmupThreads, 1, (i) => runRefundThread(entry.graph, `${entry.key}-warm-s${i}`));
    await runPool(SETTINGS.warmupThreads * 2, SETTINGS.concurrency, (i) =>
      runRefundThread(entry.graph, `${entry.key}-warm-c${i}`),
    );
  }
  resetMemory();
  log("warm-up done");

  // --- per-phase profile of one thread: statements and saver calls -------------------------------------------
  const profiles: Record<Key, Record<ThreadPhase, { statements: number; calls: CallCounts }>> = {
    memory: {} as never,
    official: {} as never,
    ours: {} as never,
  };
  for (const entry of entries) {
    let statements = entry.statements();
    let calls = { ...entry.calls };
    const profile = profiles[entry.key];
    await runRefundThread(entry.graph, `${entry.key}-profile`, (phase) => {
      profile[phase] = { statements: entry.statements() - statements, calls: diffCounts(entry.calls, calls) };
      statements = entry.statements();
      calls = { ...entry.calls };
    });
  }

  // --- floor: what one round trip and one durable commit cost on this machine ---------------------------------
  // Measured in every rep, right after its sequential runs, so each rep's ceiling uses that rep's machine: a floor
  // measured minutes apart from the runs it bounds can be off by several times on a shared machine.
  const measureFloor = async (samples: number, warmup: number) => {
    const client = await adminPool.connect();
    try {
      await client.query("CREATE TABLE IF NOT EXISTS bench_floor (i int)");
      const roundTrip = await sample(samples, warmup, () => client.query("SELECT 1"));
      const commit = await sample(samples, warmup, () => client.query("INSERT INTO bench_floor VALUES (1)"));
      return { roundTripMs: median(roundTrip), commitMs: median(commit) };
    } finally {
      client.release();
    }
  };
  const repFloors: { roundTripMs: number; commitMs: number }[] = [];

  // --- refund threads: sequential, then concurrency 20; reps interleaved across savers, order rotated ----------
  for (let rep = 0; rep < SETTINGS.reps; rep++) {
    for (const mode of ["seq", "conc"] as const) {
      if (mode === "conc") repFloors.push(await measureFloor(400, 50));
      for (const entry of rotate(entries, rep)) {
        const n = mode === "seq" ? SETTINGS.seqThreads : SETTINGS.concThreads;
        const statementsBefore = entry.statements();
        const wireBefore = entry.key === "ours" ? oursWire.statements : 0;
        const callsBefore = { ...entry.calls };
        const pgCpuBefore = await backendCpu(entry.appName);
        const busyBefore = systemBusyMs();
        const nodeCpuBefore = process.cpuUsage();
        const result = await runPool(n, mode === "seq" ? 1 : SETTINGS.concurrency, (i) =>
          runRefundThread(entry.graph, `${entry.key}-${mode}-r${rep}-${i}`),
        );
        const nodeCpu = process.cpuUsage(nodeCpuBefore);
        const busy = systemBusyMs() - busyBefore;
        const pgCpu = cpuSpent(pgCpuBefore, await backendCpu(entry.appName));
        const nodeMs = (nodeCpu.user + nodeCpu.system) / 1000;
        entry[mode].push(result);
        entry.cpu[mode].push({ node: nodeMs, pg: pgCpu, other: Math.max(0, busy - nodeMs - pgCpu) });
        entry.threadsMeasured += n;
        entry.statementsMeasured += entry.statements() - statementsBefore;
        entry.callsMeasured = addCalls(entry.callsMeasured, diffCounts(entry.calls, callsBefore));
        if (
          entry.key === "ours" &&
          oursWire.statements - wireBefore !== entry.statements() - statementsBefore
        ) {
          throw new Error("CountingSqlClient and the wire count disagree for our saver");
        }
        if (entry.key === "memory") resetMemory();
        log(
          `rep ${rep + 1}/${SETTINGS.reps} ${mode.padEnd(4)} ${entry.key.padEnd(8)} ` +
            `${fmt((n / result.elapsedMs) * 1000)} threads/s`,
        );
      }
    }
  }

  // --- disk ----------------------------------------------------------------------------------------------------
  const TABLES = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];
  async function disk(schema: string) {
    const [row] = await admin<{
      sizes: string[];
      indexes: string[];
      threads: number;
      cps: number;
      blobs: number;
      writes: number;
    }>(
      `SELECT ARRAY[${TABLES.map((t) => `pg_total_relation_size('"${schema}"."${t}"')::text`).join(", ")}] AS sizes,
        ARRAY[${TABLES.map((t) => `pg_indexes_size('"${schema}"."${t}"')::text`).join(", ")}] AS indexes,
        (SELECT count(DISTINCT thread_id) FROM "${schema}".checkpoints)::int AS threads,
        (SELECT count(*) FROM "${schema}".checkpoints)::int AS cps,
        (SELECT count(*) FROM "${schema}".checkpoint_blobs)::int AS blobs,
        (SELECT count(*) FROM "${schema}".checkpoint_writes)::int AS writes`,
    );
    const r = row!;
    const sizes = r.sizes.map(Number);
    const bytes = sizes.reduce((a, b) => a + b, 0);
    return {
      threads: r.threads,
      bytes,
      bytesPerThread: bytes / r.threads,
      /** Per table: total bytes per thread, and the part of it that is indexes. */
      tablePerThread: Object.fromEntries(
        TABLES.map((t, i) => [
          t,
          { total: Math.round(sizes[i]! / r.threads), indexes: Math.round(Number(r.indexes[i]) / r.threads) },
        ]),
      ),
      rowsPerThread: {
        checkpoints: r.cps / r.threads,
        blobs: r.blobs / r.threads,
        writes: r.writes / r.threads,
      },
    };
  }
  const vacuum = async (schema: string) => {
    for (const t of TABLES) await admin(`VACUUM (ANALYZE) "${schema}"."${t}"`);
  };
  const diskRaw = { ours: await disk(OURS_SCHEMA), official: await disk(OFFICIAL_SCHEMA) };
  await vacuum(OURS_SCHEMA);
  await vacuum(OFFICIAL_SCHEMA);
  const diskVacuumed = { ours: await disk(OURS_SCHEMA), official: await disk(OFFICIAL_SCHEMA) };
  log("disk measured");

  // The floor over the whole run (for the unpaired figure): the median of the reps' floors.
  const floor = {
    roundTripMs: median(repFloors.map((f) => f.roundTripMs)),
    commitMs: median(repFloors.map((f) => f.commitMs)),
  };
  await admin("DROP TABLE IF EXISTS bench_floor");

  // --- raw saver cycles: put + putWrites, sequential, realistic payload ----------------------------------------
  const rawEntries = [byKey("ours"), byKey("official")];
  const rawResults: Record<string, { runs: RunResult[]; statements: number; cycles: number }> = {};
  const bases: Record<string, CheckpointTuple> = {};
  for (const entry of rawEntries) {
    const base = await entry.saver.getTuple({ configurable: { thread_id: `${entry.key}-seq-r0-0` } });
    if (!base) throw new Error(`no finished thread to copy a payload from (${entry.key})`);
    bases[entry.key] = base;
    await rawCycles(entry.saver, base, `${entry.key}-raw-warm`, 50);
    rawResults[entry.key] = { runs: [], statements: 0, cycles: 0 };
  }
  for (let rep = 0; rep < SETTINGS.reps; rep++) {
    for (const entry of rotate(rawEntries, rep)) {
      const before = entry.statements();
      const result = await rawCycles(
        entry.saver,
        bases[entry.key]!,
        `${entry.key}-raw-r${rep}`,
        SETTINGS.rawCycles,
      );
      const r = rawResults[entry.key]!;
      r.runs.push(result);
      r.statements += entry.statements() - before;
      r.cycles += result.threads;
    }
  }
  log("raw cycles done");

  // --- reads on a big table ------------------------------------------------------------------------------------
  // One long thread per Postgres saver: the refund graph re-run on the same thread until it has ≥ 300 checkpoints.
  const longThread: Record<string, string> = {};
  for (const entry of rawEntries) {
    const schema = entry.key === "ours" ? OURS_SCHEMA : OFFICIAL_SCHEMA;
    const threadId = `${entry.key}-long`;
    longThread[entry.key] = threadId;
    for (;;) {
      const [row] = await admin<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}".checkpoints WHERE thread_id = $1`,
        [threadId],
      );
      if (row!.n >= SETTINGS.longThread) break;
      await runRefundThread(entry.graph, threadId);
    }
  }
  // Bulk fill: copy every stored thread (not the long one) under new thread ids, rows and blobs byte for byte,
  // until `checkpoints` holds the target row count. Copies are complete, valid threads for the saver that wrote them.
  async function fill(schema: string, exclude: string): Promise<number> {
    const [row] = await admin<{ total: number; base: number }>(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE thread_id <> $1)::int AS base FROM "${schema}".checkpoints`,
      [exclude],
    );
    const { total, base } = row!;
    const copies = total >= SETTINGS.fillTarget ? 0 : Math.ceil((SETTINGS.fillTarget - total) / base);
    if (copies === 0) return total;
    for (const t of TABLES) {
      const columns = await admin<{ name: string }>(
        `SELECT column_name AS name FROM information_schema.columns
         WHERE table_schema = $1 AND table_name = $2 AND is_generated = 'NEVER' AND is_identity = 'NO'
         ORDER BY ordinal_position`,
        [schema, t],
      );
      const names = columns.map((c) => `"${c.name}"`);
      const select = columns.map((c) =>
        c.name === "thread_id" ? `x.thread_id || '~c' || g` : `x."${c.name}"`,
      );
      await admin(
        `INSERT INTO "${schema}"."${t}" (${names.join(", ")})
         SELECT ${select.join(", ")} FROM "${schema}"."${t}" x CROSS JOIN generate_series(1, $1::int) g
         WHERE x.thread_id <> $2`,
        [copies, exclude],
      );
    }
    await vacuum(schema);
    // Flush the fill's dirty pages now rather than during the timed reads (a plain checkpoint; nothing is relaxed).
    await admin("CHECKPOINT");
    const [after] = await admin<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".checkpoints`);
    return after!.n;
  }
  const fillStart = performance.now();
  const checkpointsInTable = await fill(OURS_SCHEMA, longThread.ours!);
  const officialCheckpointsInTable = await fill(OFFICIAL_SCHEMA, longThread.official!);
  log(`tables filled in ${fmt((performance.now() - fillStart) / 1000)} s`);

  const samplesOf = async (schema: string, exclude: string) => {
    const threads = (
      await admin<{ id: string }>(
        `SELECT thread_id AS id FROM "${schema}".checkpoints WHERE thread_id <> $1
         GROUP BY thread_id ORDER BY random() LIMIT $2`,
        [exclude, SETTINGS.readSamples],
      )
    ).map((r) => r.id);
    const ids = (
      await admin<{ id: string }>(
        `SELECT checkpoint_id AS id FROM "${schema}".checkpoints WHERE thread_id = $1 ORDER BY random()`,
        [exclude],
      )
    ).map((r) => r.id);
    const pairs = await admin<{ thread: string; id: string }>(
      `SELECT thread_id AS thread, checkpoint_id AS id FROM "${schema}".checkpoints WHERE thread_id <> $1
       ORDER BY random() LIMIT $2`,
      [exclude, SETTINGS.readSamples],
    );
    return { threads, ids, pairs, longCount: ids.length };
  };
  const oursSamples = await samplesOf(OURS_SCHEMA, longThread.ours!);
  const [longBlob] = await admin<{ max: number; avg: number }>(
    `SELECT max(length(blob))::int AS max, avg(length(blob))::int AS avg
     FROM checkpoint.checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages'`,
    [longThread.ours],
  );
  const officialSamples = await samplesOf(OFFICIAL_SCHEMA, longThread.official!);

  const reads: Record<string, number[]> = {};
  const readsPgBefore = [await backendCpu("bench_ours"), await backendCpu("bench_official")];
  const readsBusyBefore = systemBusyMs();
  const readsNodeBefore = process.cpuUsage();
  const readsStart = performance.now();
  const must = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`read returned nothing: ${what}`);
    return value;
  };
  const { readSamples: N, readWarmup: W } = SETTINGS;
  const longId = longThread.ours!;
  const firstPage = await listCheckpointHistory({ sql: database.sql, threadId: longId, limit: HISTORY_PAGE });
  if (firstPage.entries.length !== HISTORY_PAGE) throw new Error("history: short first page");
  let cursor = firstPage.nextCursor;
  const middlePageIndex = Math.floor(oursSamples.longCount / HISTORY_PAGE / 2);
  for (let p = 1; p < middlePageIndex; p++) {
    cursor = (
      await listCheckpointHistory({
        sql: database.sql,
        threadId: longId,
        before: cursor,
        limit: HISTORY_PAGE,
      })
    ).nextCursor;
  }
  type ReadKind = [name: string, read: (i: number) => Promise<unknown>];
  const history = (before: string | null) => async () => {
    const page = await listCheckpointHistory({
      sql: database.sql,
      threadId: longId,
      before,
      limit: HISTORY_PAGE,
    });
    if (page.entries.length !== HISTORY_PAGE) throw new Error("history: short page");
  };
  const smallReads: ReadKind[] = [
    ["ours.history.first", history(null)],
    ["ours.history.middle", history(cursor)],
  ];
  const longReads: ReadKind[] = [];
  for (const [key, saver, s] of [
    ["ours", ours, oursSamples],
    ["official", official, officialSamples],
  ] as const) {
    smallReads.push(
      [
        `${key}.getTuple.latest`,
        async (i) =>
          must(
            await saver.getTuple({ configurable: { thread_id: s.threads[i % s.threads.length] } }),
            "latest",
          ),
      ],
      [
        `${key}.getTuple.byId`,
        async (i) => {
          const pair = s.pairs[i % s.pairs.length]!;
          const config = {
            configurable: { thread_id: pair.thread, checkpoint_ns: "", checkpoint_id: pair.id },
          };
          return must(await saver.getTuple(config), "by id");
        },
      ],
    );
    longReads.push([
      `${key}.getTuple.longById`,
      async (i) => {
        const id = s.ids[i % s.ids.length];
        const config = { configurable: { thread_id: longThread[key], checkpoint_ns: "", checkpoint_id: id } };
        return must(await saver.getTuple(config), "long thread by id");
      },
    ]);
  }
  // The same long-thread reads, statement only (no deserialization): how much of getTuple is the database.
  longReads.push([
    "ours.getTuple.longByIdSql",
    async (i) => {
      const id = oursSamples.ids[i % oursSamples.ids.length];
      const rows = await database.sql.query(SELECT_TUPLE_BY_ID, [longId, "", id], "cp_get_by_id");
      if (rows.length !== 1) throw new Error("long thread by id: no row");
    },
  ]);
  // Kinds interleaved in rounds (like the thread runs), small reads first: the long thread's ~100 KiB reads leave
  // garbage behind, and its collection should not land on the sub-millisecond reads.
  const ROUNDS = 5;
  for (const kinds of [smallReads, longReads]) {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, read] of rotate(kinds, round)) {
        const per = Math.ceil(N / ROUNDS);
        const got = await sample(per, round === 0 ? W : 5, (i) => read(round * per + i));
        reads[name] = [...(reads[name] ?? []), ...got];
      }
    }
  }
  const readsNode = process.cpuUsage(readsNodeBefore);
  const readsOtherCores =
    Math.max(
      0,
      systemBusyMs() -
        readsBusyBefore -
        (readsNode.user + readsNode.system) / 1000 -
        cpuSpent(readsPgBefore[0]!, await backendCpu("bench_ours")) -
        cpuSpent(readsPgBefore[1]!, await backendCpu("bench_official")),
    ) /
    (performance.now() - readsStart);
  log("reads measured");

  // --- report --------------------------------------------------------------------------------------------------
  const tp = (key: Key, mode: "seq" | "conc") => throughput(byKey(key)[mode]);
  const p = (key: Key, mode: "seq" | "conc", q: number) => percentile(latencies(byKey(key)[mode]), q);
  const stmtsPerThread = (key: Key) => byKey(key).statementsMeasured / byKey(key).threadsMeasured;
  const callsPerThread = (key: Key) => perThread(byKey(key).callsMeasured, byKey(key).threadsMeasured);
  const excludingGetState = (key: Key) => stmtsPerThread(key) - profiles[key].getState.statements;
  const out: string[] = [];
  const say = (line = "") => out.push(line);

  say(`Checkpointer benchmark — ${QUICK ? "quick" : "full"} run, ${new Date().toISOString()}`);
  say(
    `Node ${process.version}, ${os.cpus().length} CPUs; ${server!.version.split(" (")[0]} on the same host, ` +
      `fsync=${server!.fsync}, synchronous_commit=${server!.sync}`,
  );
  say(
    `@langchain/langgraph ${packageVersion("@langchain/langgraph")}, ` +
      `@langchain/langgraph-checkpoint-postgres ${packageVersion("@langchain/langgraph-checkpoint-postgres")}`,
  );
  say(
    `Durability: LangGraph default ("async") for all savers. Pools: ${POOL_SIZE} connections each. ` +
      `Reps: ${SETTINGS.reps} × (${SETTINGS.seqThreads} sequential + ${SETTINGS.concThreads} at concurrency ` +
      `${SETTINGS.concurrency}) threads per saver, interleaved, order rotated per rep.`,
  );
  say("A thread = invoke → interrupt at human_review → getState (read the interrupt) → resume → finish.");
  say(
    "Threads/s = median over reps; ratios = median over reps of ours / other within the rep; latency " +
      "percentiles pool every thread of every rep.",
  );
  say();
  say(
    table(
      ["refund threads", "seq thr/s", "seq p50 ms", "seq p95 ms", "conc thr/s", "conc p50 ms", "conc p95 ms"],
      entries.map((e) => [
        e.label,
        tp(e.key, "seq"),
        p(e.key, "seq", 50),
        p(e.key, "seq", 95),
        tp(e.key, "conc"),
        p(e.key, "conc", 50),
        p(e.key, "conc", 95),
      ]),
    ),
  );
  say();
  const cpuPerThread = (key: Key, mode: "seq" | "conc", side: "node" | "pg") => {
    const e = byKey(key);
    const ms = e.cpu[mode].reduce((sum, c) => sum + c[side], 0);
    // Pooled over every rep, like the latency percentiles.
    return ms / e[mode].reduce((sum, r) => sum + r.threads, 0);
  };
  say(
    table(
      ["CPU ms per thread", "seq Node", "seq PG", "seq wall", "conc Node", "conc PG"],
      entries.map((e) => [
        e.label,
        cpuPerThread(e.key, "seq", "node"),
        e.appName ? cpuPerThread(e.key, "seq", "pg") : "-",
        1000 / tp(e.key, "seq"),
        cpuPerThread(e.key, "conc", "node"),
        e.appName ? cpuPerThread(e.key, "conc", "pg") : "-",
      ]),
    ),
  );
  say(
    "(Node = this process, all threads; PG = the saver's own backend processes, from /proc; seq wall = 1000 / threads/s)",
  );
  say();
  say("Threads/s per rep, seq | conc (in brackets: CPU cores used by other processes during that run):");
  for (const e of entries) {
    const perRep = (mode: "seq" | "conc") =>
      e[mode].map((r, i) => `${fmt(rate(r))} [${fmt(e.cpu[mode][i]!.other / r.elapsedMs)}]`).join("  ");
    say(`  ${e.key.padEnd(8)} ${perRep("seq")} | ${perRep("conc")}`);
  }
  const ratios = {
    seqVsOfficial: pairedRatio(byKey("ours").seq, byKey("official").seq),
    concVsOfficial: pairedRatio(byKey("ours").conc, byKey("official").conc),
    seqVsMemory: pairedRatio(byKey("ours").seq, byKey("memory").seq),
    concVsMemory: pairedRatio(byKey("ours").conc, byKey("memory").conc),
  };
  say();
  say(
    `Ratios (ours throughput / other): vs official seq ${fmt(ratios.seqVsOfficial)}×, ` +
      `conc ${fmt(ratios.concVsOfficial)}×; vs memory seq ${fmt(ratios.seqVsMemory)}×, ` +
      `conc ${fmt(ratios.concVsMemory)}×`,
  );
  // Sequential ceiling: LangGraph alone (the memory saver's time per thread) plus, for a saver with no CPU cost of
  // its own, one durable commit per put/putWrites and one round trip per read.
  const oursCalls = callsPerThread("ours");
  const floorMs =
    1000 / tp("memory", "seq") +
    (oursCalls.put + oursCalls.putWrites) * floor.commitMs +
    (oursCalls.getTuple + oursCalls.list) * floor.roundTripMs;
  const seqCeiling = 1000 / tp("official", "seq") / floorMs;
  // Ours as a fraction of that zero-cost ceiling (1.0 = no cost of our own beyond the commits and round trips).
  // No concurrent ceiling: under concurrency commits overlap, so "one commit per call" bounds nothing.
  const seqOfCeiling = (tp("ours", "seq") * floorMs) / 1000;
  // The same, paired per rep (ours against the ceiling built from that rep's memory run and that rep's floor):
  // steadier when the machine's load changes between reps, as the medians above are taken from different reps.
  const seqOfCeilingPaired = median(
    byKey("ours").seq.map((run, i) => {
      const f = repFloors[i]!;
      const ceilingMs =
        1000 / rate(byKey("memory").seq[i]!) +
        (oursCalls.put + oursCalls.putWrites) * f.commitMs +
        (oursCalls.getTuple + oursCalls.list) * f.roundTripMs;
      return (rate(run) * ceilingMs) / 1000;
    }),
  );
  say(
    `Floor on this machine: round trip ${fmt(floor.roundTripMs)} ms, durable autocommit INSERT ` +
      `${fmt(floor.commitMs)} ms (medians of the reps' floors, each measured right after that rep's sequential runs). A zero-cost saver making one commit per put/putWrites ` +
      `(${oursCalls.put + oursCalls.putWrites}/thread) and one round trip per read would need ≈ ${fmt(floorMs)} ms ` +
      `per sequential thread: at most ≈ ${fmt(seqCeiling)}× the official saver's sequential throughput.`,
  );
  say(
    `Ours vs the zero-cost ceiling, sequential: ${fmt(tp("ours", "seq"))} / ${fmt(1000 / floorMs)} thr/s = ` +
      `${fmt(seqOfCeiling)} of the ceiling; paired per rep ${fmt(seqOfCeilingPaired)} (concurrent: no ceiling computed).`,
  );
  say();
  const phaseCell = (key: Key, phase: ThreadPhase) => {
    const ph = profiles[key][phase];
    return `${Number.isNaN(ph.statements) ? "-" : ph.statements} / ${totalCalls(ph.calls)}`;
  };
  say(
    table(
      ["per thread", "SQL stmts", "excl. getState", "saver calls", "invoke", "getState", "resume"],
      entries.map((e) => [
        e.label,
        e.key === "memory" ? "-" : round(stmtsPerThread(e.key)),
        e.key === "memory" ? "-" : round(excludingGetState(e.key)),
        JSON.stringify(callsPerThread(e.key)),
        phaseCell(e.key, "invoke"),
        phaseCell(e.key, "getState"),
        phaseCell(e.key, "resume"),
      ]),
    ),
  );
  say("(phase columns: SQL statements / saver calls of that phase, measured on one profiled thread)");
  say();
  say(
    table(
      ["disk", "threads", "cp rows/thr", "blob rows/thr", "write rows/thr", "bytes/thr", "after VACUUM"],
      (["official", "ours"] as const).map((key) => [
        byKey(key).label,
        diskRaw[key].threads,
        diskRaw[key].rowsPerThread.checkpoints,
        diskRaw[key].rowsPerThread.blobs,
        diskRaw[key].rowsPerThread.writes,
        Math.round(diskRaw[key].bytesPerThread),
        Math.round(diskVacuumed[key].bytesPerThread),
      ]),
    ),
  );
  say(
    "(pg_total_relation_size of the 3 tables incl. indexes and TOAST, right after the runs / after VACUUM ANALYZE)",
  );
  const perTable = (key: "ours" | "official") =>
    Object.entries(diskRaw[key].tablePerThread)
      .map(([t, v]) => `${t} ${fmt(v.total)} (indexes ${fmt(v.indexes)})`)
      .join(", ");
  say(`Per table, bytes/thread: official ${perTable("official")}`);
  say(`                         ours     ${perTable("ours")}`);
  say();
  say(
    table(
      ["raw put+putWrites", "cycles/s", "p50 ms", "p95 ms", "stmts/cycle"],
      rawEntries.map((e) => {
        const r = rawResults[e.key]!;
        return [
          e.label,
          throughput(r.runs),
          percentile(latencies(r.runs), 50),
          percentile(latencies(r.runs), 95),
          round(r.statements / r.cycles),
        ];
      }),
    ),
  );
  const rawRatio = pairedRatio(rawResults.ours!.runs, rawResults.official!.runs);
  say(`Raw cycles ratio (ours / official): ${fmt(rawRatio)}×`);
  say();
  const rd = (name: string, q: number) => percentile(reads[name] ?? [], q);
  say(
    `Reads: ours checkpoints table ${checkpointsInTable.toLocaleString("en-US")} rows, official ` +
      `${officialCheckpointsInTable.toLocaleString("en-US")} rows; long thread ${oursSamples.longCount} checkpoints; ` +
      `${N} samples each, sequential, after VACUUM ANALYZE; other processes used ${fmt(readsOtherCores)} cores meanwhile.`,
  );
  say(
    table(
      ["read", "ours p50 ms", "ours p95 ms", "official p50 ms", "official p95 ms"],
      [
        ["getTuple latest (random thread)", "getTuple.latest"],
        ["getTuple by id (random checkpoint)", "getTuple.byId"],
        [`getTuple by id (long thread)`, "getTuple.longById"],
        ["  same, SQL statement only", "getTuple.longByIdSql"],
        [`history page of ${HISTORY_PAGE}, first`, "history.first"],
        [`history page of ${HISTORY_PAGE}, middle (cursor)`, "history.middle"],
      ].map(([label, name]) => [
        label!,
        rd(`ours.${name}`, 50),
        rd(`ours.${name}`, 95),
        reads[`official.${name}`] ? rd(`official.${name}`, 50) : "-",
        reads[`official.${name}`] ? rd(`official.${name}`, 95) : "-",
      ]),
    ),
  );
  say(
    `(the official saver has no metadata-only history page; the long thread's messages value is up to ` +
      `${fmt(longBlob!.max / 1024)} KiB serialized, ${fmt(longBlob!.avg / 1024)} KiB on average)`,
  );

  const r2 = (value: number) => round(value, 2);
  /** One figure for each saver, in the JSON's key order. */
  const perSaver = (figure: (key: Key) => number) => ({
    ours: r2(figure("ours")),
    official: r2(figure("official")),
    memory: r2(figure("memory")),
  });
  /** Node and Postgres CPU per thread (MemorySaver has no Postgres side). */
  const cpuPerSaver = (mode: "seq" | "conc") => ({
    ours: { node: r2(cpuPerThread("ours", mode, "node")), pg: r2(cpuPerThread("ours", mode, "pg")) },
    official: {
      node: r2(cpuPerThread("official", mode, "node")),
      pg: r2(cpuPerThread("official", mode, "pg")),
    },
    memory: { node: r2(cpuPerThread("memory", mode, "node")) },
  });
  const json = {
    mode: QUICK ? "quick" : "full",
    durability: "async (LangGraph default)",
    reps: SETTINGS.reps,
    seq_threads_per_rep: SETTINGS.seqThreads,
    conc_threads_per_rep: SETTINGS.concThreads,
    concurrency: SETTINGS.concurrency,
    ratio_seq_vs_official: r2(ratios.seqVsOfficial),
    ratio_conc_vs_official: r2(ratios.concVsOfficial),
    ratio_seq_vs_memory: r2(ratios.seqVsMemory),
    ratio_conc_vs_memory: r2(ratios.concVsMemory),
    seq_threads_per_s: perSaver((k) => tp(k, "seq")),
    conc_threads_per_s: perSaver((k) => tp(k, "conc")),
    seq_p50_ms: perSaver((k) => p(k, "seq", 50)),
    seq_p95_ms: perSaver((k) => p(k, "seq", 95)),
    conc_p50_ms: perSaver((k) => p(k, "conc", 50)),
    conc_p95_ms: perSaver((k) => p(k, "conc", 95)),
    seq_threads_per_s_pooled: perSaver((k) => pooledThroughput(byKey(k).seq)),
    conc_threads_per_s_pooled: perSaver((k) => pooledThroughput(byKey(k).conc)),
    statements_per_thread: r2(stmtsPerThread("ours")),
    official_statements_per_thread: r2(stmtsPerThread("official")),
    statements_per_thread_excl_get_state: r2(excludingGetState("ours")),
    official_statements_per_thread_excl_get_state: r2(excludingGetState("official")),
    saver_calls_per_thread: r2(totalCalls(callsPerThread("ours"))),
    saver_calls_breakdown: callsPerThread("ours"),
    official_saver_calls_breakdown: callsPerThread("official"),
    statements_per_saver_call: r2(byKey("ours").statementsMeasured / totalCalls(byKey("ours").callsMeasured)),
    official_statements_per_saver_call: r2(
      byKey("official").statementsMeasured / totalCalls(byKey("official").callsMeasured),
    ),
    cpu_ms_per_thread_seq: cpuPerSaver("seq"),
    cpu_ms_per_thread_conc: cpuPerSaver("conc"),
    bytes_per_thread: Math.round(diskRaw.ours.bytesPerThread),
    official_bytes_per_thread: Math.round(diskRaw.official.bytesPerThread),
    bytes_per_thread_after_vacuum: Math.round(diskVacuumed.ours.bytesPerThread),
    official_bytes_per_thread_after_vacuum: Math.round(diskVacuumed.official.bytesPerThread),
    raw_cycles_per_s: {
      ours: r2(throughput(rawResults.ours!.runs)),
      official: r2(throughput(rawResults.official!.runs)),
    },
    raw_cycles_ratio: r2(rawRatio),
    other_cpu_cores_max: r2(
      Math.max(
        ...entries.flatMap((e) =>
          (["seq", "conc"] as const).flatMap((m) => e.cpu[m].map((c, i) => c.other / e[m][i]!.elapsedMs)),
        ),
      ),
    ),
    reads_other_cpu_cores: r2(readsOtherCores),
    floor_round_trip_ms: round(floor.roundTripMs, 3),
    floor_commit_ms: round(floor.commitMs, 3),
    seq_ratio_ceiling_estimate: r2(seqCeiling),
    seq_ceiling_threads_per_s: r2(1000 / floorMs),
    seq_ratio_of_ceiling: r2(seqOfCeiling),
    seq_ratio_of_ceiling_paired: r2(seqOfCeilingPaired),
    checkpoints_in_table: checkpointsInTable,
    official_checkpoints_in_table: officialCheckpointsInTable,
    long_thread_checkpoints: oursSamples.longCount,
    get_tuple_latest_p95_ms: r2(rd("ours.getTuple.latest", 95)),
    get_tuple_by_id_p95_ms: r2(rd("ours.getTuple.byId", 95)),
    get_tuple_p95_ms: r2(Math.max(rd("ours.getTuple.latest", 95), rd("ours.getTuple.byId", 95))),
    official_get_tuple_p95_ms: r2(
      Math.max(rd("official.getTuple.latest", 95), rd("official.getTuple.byId", 95)),
    ),
    get_tuple_long_thread_p95_ms: r2(rd("ours.getTuple.longById", 95)),
    get_tuple_long_thread_sql_only_p95_ms: r2(rd("ours.getTuple.longByIdSql", 95)),
    official_get_tuple_long_thread_p95_ms: r2(rd("official.getTuple.longById", 95)),
    history_first_page_p95_ms: r2(rd("ours.history.first", 95)),
    history_middle_page_p95_ms: r2(rd("ours.history.middle", 95)),
    history_page_p95_ms: r2(Math.max(rd("ours.history.first", 95), rd("ours.history.middle", 95))),
    pg_version: server!.version.split(" ").slice(0, 2).join(" "),
    node: process.version,
    bench_seconds: 0,
  };
  json.bench_seconds = Math.round((Date.now() - startedAt) / 1000);
  return { report: out.join("\n"), json };
}

/**
 * `n` sequential put + putWrites cycles on one thread, each a child of the previous checkpoint: the payload is a
 * finished refund thread's state (9 messages, the order, scalars); each cycle bumps two channels, as a node step
 * would, and records three writes for the next task.
 */
async function rawCycles(
  saver: BaseCheckpointSaver,
  base: CheckpointTuple,
  threadId: string,
  n: number,
): Promise<RunResult> {
  let parent: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
  let previous: Checkpoint = base.checkpoint;
  const reply = new AIMessage({
    id: "msg_raw",
    content: "Refund issued; the customer has been notified by email.",
    usage_metadata: { input_tokens: 1530, output_tokens: 24, total_tokens: 1554 },
  });
  return runPool(n, 1, async (i) => {
    const checkpoint = copyCheckpoint(previous);
    checkpoint.id = uuid6(-3);
    checkpoint.ts = new Date().toISOString();
    const versions = {
      messages: saver.getNextVersion(previous.channel_versions.messages as number),
      amount: saver.getNextVersion(previous.channel_versions.amount as number),
    };
    Object.assign(checkpoint.channel_versions, versions);
    const metadata: CheckpointMetadata = { source: "loop", step: i, parents: {} };
    const config = await saver.put(parent, checkpoint, metadata, versions);
    const writes: PendingWrite[] = [
      ["messages", [reply]],
      ["amount", 229.9 + i],
      ["branch:to:execute_refund", null],
    ];
    await saver.putWrites(config, writes, randomUUID(), "~__pregel_pull, policy");
    parent = config;
    previous = checkpoint;
  });
}

main()
  .then(async ({ report, json }) => {
    await teardown();
    process.stdout.write(`${report}\n${JSON.stringify(json)}\n`);
  })
  .catch(async (error: unknown) => {
    process.exitCode = 1;
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await teardown().catch((e: unknown) => log(`teardown failed: ${String(e)}`));
  });
