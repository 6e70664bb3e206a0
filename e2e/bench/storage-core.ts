import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import "@/lib/agents/index";
import { DrizzleCheckpointSaver } from "@/lib/checkpoint/saver";
import type { Database } from "@/lib/db/open";
import { type AgentGraph, CHECKPOINT_STAMP, findAgent } from "@/lib/runtime/agents/registry";
import {
  applyRetention,
  RETENTION_STEPS,
  type RetentionPolicy,
  type RetentionStep,
} from "@/lib/runtime/retention/retention-policy";
import { getCheckpointView } from "@/lib/runtime/views/checkpoint-view";
import { getThreadHistory } from "@/lib/runtime/views/history-view";
import { agentFor, answer, createTicket, runOnce } from "../api/client";

/*
 * The storage benchmark's engine, shared by `npm run bench:storage` (10,000 threads) and its small variant in the
 * integration tests. Real refund threads are made over HTTP (templates: finished ones of several shapes, and ones
 * paused at the approval), then cloned in SQL into `total` threads spread over `days` simulated days (every
 * timestamp shifted, every id remapped), so each table holds what that many real threads would hold. Then the
 * default policy runs step by step; after each step the bytes per finished thread are measured per category.
 *
 * Bytes are row bytes: pg_column_size of each row plus 28 bytes of per-row overhead (tuple header and line pointer),
 * counted for the finished threads' rows in every table — before and after, over the same set of threads (an
 * archived thread still counts: its decisions, effects and audit rows stay). Index and free space are not counted.
 */

export const BENCH_ROW_OVERHEAD = 28;

/** Templates: each shape of finished refund thread, and a thread paused at the approval. */
export async function makeTemplates(baseUrl: string): Promise<{ finished: string[]; pending: string[] }> {
  const flows: { message: string; decision?: unknown; email: unknown }[] = [
    {
      message: "My headphones from ORD-1002 are broken, please refund them.",
      decision: { decision: "approve" },
      email: { choice: "send" },
    },
    {
      message: "Refund please for ORD-1006, the lamp is not what I expected.",
      decision: { decision: "reject", note: "Outside the 30-day window." },
      email: { choice: "dont_send" },
    },
    {
      message: "The laptop from ORD-1008 has a scratch, I want a refund.",
      decision: { decision: "approve_partial", amountCents: 20000, note: "scratch" },
      email: { choice: "send" },
    },
    { message: "My T-shirts from ORD-1003 shrank in the wash, refund please.", email: { choice: "send" } },
  ];
  const finished: string[] = [];
  for (const flow of flows) {
    const threadId = await createTicket(baseUrl, flow.message);
    const agent = agentFor(baseUrl, threadId);
    let run = await runOnce(agent, { message: flow.message });
    for (let i = 0; run.interrupts.length > 0 && i < 4; i++) {
      run = await runOnce(agent, {
        resume: run.interrupts.map((it) =>
          answer(
            it,
            it.reason === "refund_approval" ? (flow.decision ?? { decision: "approve" }) : flow.email,
          ),
        ),
      });
    }
    finished.push(threadId);
  }
  const message = "I would like a refund for my backpack from ORD-1004, it tore on day two.";
  const threadId = await createTicket(baseUrl, message);
  const run = await runOnce(agentFor(baseUrl, threadId), { message });
  if (run.interrupts.length === 0) throw new Error("the pending template did not pause");
  return { finished, pending: [threadId] };
}

/** Wait until no side effect of the templates is still queued or sending (clones copy their effects' state). */
export async function waitForEffects(sql: Database["sql"], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM effects WHERE status IN ('queued', 'sending')`,
    );
    if ((row?.n ?? 0) === 0) return;
    if (Date.now() > deadline) throw new Error(`${row?.n} effects still undelivered`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Tables and the column naming their thread. */
const THREAD_TABLES: Record<string, { thread: string; category: Category }> = {
  // Threads first: runs and events refer to them.
  threads: { thread: "id", category: "ledgers" },
  runs: { thread: "thread_id", category: "ledgers" },
  decisions: { thread: "thread_id", category: "ledgers" },
  effects: { thread: "thread_id", category: "ledgers" },
  refunds: { thread: "thread_id", category: "ledgers" },
  outbox: { thread: "thread_id", category: "ledgers" },
  "checkpoint.checkpoints": { thread: "thread_id", category: "checkpoints" },
  "checkpoint.checkpoint_blobs": { thread: "thread_id", category: "checkpoints" },
  "checkpoint.checkpoint_writes": { thread: "thread_id", category: "checkpoints" },
  events: { thread: "thread_id", category: "events" },
  audit_log: { thread: "thread_id", category: "audit" },
};
export const CATEGORIES = ["checkpoints", "events", "ledgers", "audit"] as const;
type Category = (typeof CATEGORIES)[number];
/** Columns holding ids that must be unique per clone (remapped); thread columns get the clone's thread id. */
const REMAPPED = new Set(["id", "run_id", "interrupt_id", "resume_run_id", "record_id", "idempotency_key"]);
/** Generated, or set only by an erasure. */
const SKIPPED: Record<string, Set<string>> = {
  audit_log: new Set(["id", "erased_by"]),
};

type Sql = Database["sql"];

/** `table` may be schema-qualified (the saver's tables are in `checkpoint`). */
async function columnsOf(sql: Sql, table: string): Promise<{ name: string; type: string }[]> {
  const [schema, name] = table.includes(".") ? table.split(".") : [null, table];
  return sql.query<{ name: string; type: string }>(
    // Generated columns (the search vectors) are computed by the copy itself and cannot be written.
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
     WHERE table_schema = coalesce($2, current_schema()) AND table_name = $1 AND is_generated = 'NEVER'
     ORDER BY ordinal_position`,
    [name, schema],
  );
}

/**
 * Clone the templates into `total` threads (every `pendingEvery`-th one from a pending template), each shifted to
 * end at a point spread evenly over the last `days` days. Returns the finished and pending clones' ids.
 */
export async function cloneThreads(
  sql: Sql,
  templates: { finished: string[]; pending: string[] },
  { total, days, pendingEvery }: { total: number; days: number; pendingEvery: number },
): Promise<{ finished: number; pending: number }> {
  await sql.query(`DROP TABLE IF EXISTS bench_clones`);
  await sql.query(
    `CREATE TABLE bench_clones AS
     SELECT g AS n, src, md5(src || ':' || g)::uuid::text AS dst, pending,
       (now() - ((g * 7919) % ($3::int * 1000)) * interval '1 day' / 1000) - t.updated_at AS shift
     FROM generate_series(1, $1::int) AS g
     CROSS JOIN LATERAL (SELECT g % $2::int = 0 AS pending) p
     CROSS JOIN LATERAL (
       SELECT CASE WHEN p.pending THEN $5::text[] ELSE $4::text[] END AS pool
     ) k
     CROSS JOIN LATERAL (SELECT k.pool[1 + (g % array_length(k.pool, 1))] AS src) s
     JOIN threads t ON t.id = s.src`,
    [total, pendingEvery, days, templates.finished, templates.pending],
  );
  for (const [table, { thread }] of Object.entries(THREAD_TABLES)) {
    const skipped = SKIPPED[table] ?? new Set<string>();
    const columns = (await columnsOf(sql, table)).filter((c) => !skipped.has(c.name));
    const value = (c: { name: string; type: string }) => {
      if (c.name === thread) return "m.dst";
      if (REMAPPED.has(c.name))
        return `CASE WHEN x.${c.name} IS NULL THEN NULL ELSE md5(x.${c.name} || ':' || m.n) END`;
      if (c.type === "timestamp with time zone") return `x.${c.name} + m.shift`;
      return `x.${c.name}`;
    };
    await sql.query(
      `INSERT INTO ${table} (${columns.map((c) => c.name).join(", ")})
       SELECT ${columns.map(value).join(", ")} FROM bench_clones m JOIN ${table} x ON x.${thread} = m.src
       ORDER BY m.n`,
    );
  }
  // The checkpoints' created_at follows the shift; LangGraph's own `ts` in the JSON is left as it was.
  const [counts] = await sql.query<{ finished: number; pending: number }>(
    `SELECT count(*) FILTER (WHERE NOT pending)::int AS finished, count(*) FILTER (WHERE pending)::int AS pending
     FROM bench_clones`,
  );
  await sql.query(`ANALYZE`);
  return counts ?? { finished: 0, pending: 0 };
}

/** Row bytes of the clones' rows per category; `which` picks the finished or the pending clones. */
export async function measure(sql: Sql, which: "finished" | "pending"): Promise<Record<Category, number>> {
  const bytes: Record<Category, number> = { checkpoints: 0, events: 0, ledgers: 0, audit: 0 };
  for (const [table, { thread, category }] of Object.entries(THREAD_TABLES)) {
    const [row] = await sql.query<{ bytes: string }>(
      `SELECT coalesce(sum(pg_column_size(x.*) + ${BENCH_ROW_OVERHEAD}), 0)::text AS bytes
       FROM ${table} x JOIN bench_clones m ON x.${thread} = m.dst WHERE m.pending = $1`,
      [which === "pending"],
    );
    bytes[category] += Number(row?.bytes ?? 0);
  }
  if (which === "finished") {
    // Retention's own audit entries (the prune reports, the archive batches with their thread ids) are the finished
    // threads' cost too.
    const [own] = await sql.query<{ bytes: string }>(
      `SELECT coalesce(sum(pg_column_size(x.*) + ${BENCH_ROW_OVERHEAD}), 0)::text AS bytes FROM audit_log x
       WHERE x.action IN ('prune', 'archive') AND x.thread_id IS NULL`,
    );
    bytes.audit += Number(own?.bytes ?? 0);
  }
  return bytes;
}

/** A fingerprint of every row of every pending clone: the threads whose fingerprint changed were touched. */
export async function fingerprintPending(sql: Sql): Promise<Map<string, string>> {
  const prints = new Map<string, string>();
  for (const [table, { thread }] of Object.entries(THREAD_TABLES)) {
    const rows = await sql.query<{ id: string; print: string }>(
      `SELECT m.dst AS id, md5(string_agg(x::text, '|' ORDER BY x::text)) AS print
       FROM ${table} x JOIN bench_clones m ON x.${thread} = m.dst WHERE m.pending GROUP BY m.dst`,
    );
    for (const r of rows) prints.set(r.id, `${prints.get(r.id) ?? ""}${table}:${r.print};`);
  }
  return prints;
}

/**
 * Every kept history page of `sample` finished clones still loads: the thread's history (first page) and each of its
 * checkpoints' views (state, writes, diff), as the history page and its API read them. Returns the pages checked
 * and the truncated roots seen.
 */
export async function checkHistoryPages(
  database: Database,
  sample: number,
): Promise<{ threads: number; checkpoints: number; truncatedRoots: number }> {
  const { db, sql } = database;
  const ids = await sql.query<{ id: string; agent_id: string; agent_version: string }>(
    `SELECT t.id, t.agent_id, t.agent_version FROM bench_clones m JOIN threads t ON t.id = m.dst
     WHERE NOT m.pending ORDER BY m.n LIMIT $1`,
    [sample],
  );
  let checkpoints = 0;
  let truncatedRoots = 0;
  const graphs = new Map<string, AgentGraph>();
  for (const t of ids) {
    const agent = findAgent(t.agent_id, t.agent_version);
    if (!agent) throw new Error(`no agent ${t.agent_id}@${t.agent_version}`);
    const key = `${t.agent_id}@${t.agent_version}`;
    let graph = graphs.get(key);
    if (!graph) {
      graph = await agent.build({
        checkpointer: new DrizzleCheckpointSaver(sql, undefined, CHECKPOINT_STAMP),
        db,
      });
      graphs.set(key, graph);
    }
    const history = await getThreadHistory({ db, sql }, { threadId: t.id, before: null, limit: 50 });
    for (const c of history.checkpoints) {
      await getCheckpointView({ db, sql, graph, agent }, { threadId: t.id, checkpointId: c.checkpointId });
      checkpoints += 1;
      if (c.truncated) {
        truncatedRoots += 1;
        if (c.parentCheckpointId !== null)
          throw new Error(`truncated checkpoint ${c.checkpointId} has a parent`);
      }
    }
  }
  return { threads: ids.length, checkpoints, truncatedRoots };
}

export interface StorageBenchResult {
  threads: number;
  finished_threads: number;
  pending_threads: number;
  simulated_days: number;
  bytes_per_finished_thread_before: number;
  bytes_per_finished_thread_after: number;
  ratio: number;
  pending_threads_changed: number;
  per_step: { step: string; bytes_per_finished_thread: Record<Category | "total", number> }[];
  history_pages_checked: number;
  truncated_roots_seen: number;
  archived_threads: number;
}

const perThread = (bytes: Record<Category, number>, n: number) => {
  const out = { total: 0 } as Record<Category | "total", number>;
  for (const c of CATEGORIES) {
    out[c] = Math.round(bytes[c] / Math.max(n, 1));
    out.total += out[c];
  }
  return out;
};

/**
 * Clone, measure, apply the policy step by step (measuring after each), check pending threads and history pages.
 * The simulated clock: the clones' timestamps are spread over `days` days before now, and the policy runs now.
 */
export async function runStorageBench({
  database,
  templates,
  total,
  days,
  pendingEvery,
  policy,
  historySample,
  log,
}: {
  database: Database;
  templates: { finished: string[]; pending: string[] };
  total: number;
  days: number;
  pendingEvery: number;
  policy: Omit<RetentionPolicy, "archiveDir">;
  historySample: number;
  log: (line: string) => void;
}): Promise<StorageBenchResult> {
  const { sql, db } = database;
  const t0 = performance.now();
  const counts = await cloneThreads(sql, templates, { total, days, pendingEvery });
  log(
    `cloned ${counts.finished} finished and ${counts.pending} pending threads in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const pendingBefore = await fingerprintPending(sql);
  const before = await measure(sql, "finished");
  const perStep: StorageBenchResult["per_step"] = [
    { step: "before", bytes_per_finished_thread: perThread(before, counts.finished) },
  ];
  const row = (label: string, b: Record<Category | "total", number>) =>
    log(
      `${label.padEnd(10)} ${CATEGORIES.map((c) => `${c} ${String(b[c]).padStart(7)}`).join("  ")}  total ${String(b.total).padStart(7)} bytes/finished thread`,
    );
  row("before", perStep[0]!.bytes_per_finished_thread);
  const archiveDir = mkdtempSync(join(tmpdir(), "bench-archive-"));
  let archived = 0;
  try {
    for (const step of RETENTION_STEPS as readonly RetentionStep[]) {
      const s0 = performance.now();
      const report = await applyRetention({
        db,
        policy: { ...policy, archiveDir },
        steps: [step],
        actor: { id: "system:bench-storage", label: "storage benchmark", role: null },
      });
      archived += report.steps[0]?.threadsArchived ?? 0;
      const b = perThread(await measure(sql, "finished"), counts.finished);
      perStep.push({ step, bytes_per_finished_thread: b });
      row(step, b);
      log(
        `           (${step}: ${JSON.stringify({ ...report.steps[0], cutoff: undefined, archiveFile: undefined })}, ${((performance.now() - s0) / 1000).toFixed(1)} s)`,
      );
    }
  } finally {
    rmSync(archiveDir, { recursive: true, force: true });
  }
  const pendingAfter = await fingerprintPending(sql);
  let changed = 0;
  for (const [id, print] of pendingBefore) if (pendingAfter.get(id) !== print) changed += 1;
  const pages = await checkHistoryPages(database, historySample);
  log(
    `history pages: ${pages.threads} threads, ${pages.checkpoints} checkpoint views, ${pages.truncatedRoots} truncated roots — all rendered`,
  );
  const beforeTotal = perStep[0]!.bytes_per_finished_thread.total;
  const afterTotal = perStep.at(-1)!.bytes_per_finished_thread.total;
  return {
    threads: total,
    finished_threads: counts.finished,
    pending_threads: counts.pending,
    simulated_days: days,
    bytes_per_finished_thread_before: beforeTotal,
    bytes_per_finished_thread_after: afterTotal,
    ratio: Math.round((afterTotal / beforeTotal) * 1000) / 1000,
    pending_threads_changed: changed,
    per_step: perStep,
    history_pages_checked: pages.checkpoints,
    truncated_roots_seen: pages.truncatedRoots,
    archived_threads: archived,
  };
}

/**
 * The scheduled path: the same clones, but nobody calls the policy — `serveWithSchedule` starts the server with a
 * short RETENTION_SCHEDULE and this waits until its retention job has finished a run that started after the clones
 * were made, then measures what it left. Pending threads and history pages are checked as on the direct path.
 */
export async function runScheduledStorageBench({
  database,
  templates,
  total,
  days,
  pendingEvery,
  historySample,
  serveWithSchedule,
  log,
  timeoutMs = 15 * 60_000,
}: {
  database: Database;
  templates: { finished: string[]; pending: string[] };
  total: number;
  days: number;
  pendingEvery: number;
  historySample: number;
  /** Start a server on this database whose own schedule applies the policy; returns its stop. */
  serveWithSchedule: (archiveDir: string) => Promise<() => Promise<void>>;
  log: (line: string) => void;
  timeoutMs?: number;
}): Promise<StorageBenchResult & { scheduled_run_seconds: number }> {
  const { sql } = database;
  const counts = await cloneThreads(sql, templates, { total, days, pendingEvery });
  log(`cloned ${counts.finished} finished and ${counts.pending} pending threads`);
  const pendingBefore = await fingerprintPending(sql);
  const before = perThread(await measure(sql, "finished"), counts.finished);
  const [clock] = await sql.query<{ now: string }>(`SELECT now()::text AS now`);
  const archiveDir = mkdtempSync(join(tmpdir(), "bench-archive-"));
  const stop = await serveWithSchedule(archiveDir);
  let job: { runs: number; ok: boolean | null; seconds: number; report: unknown } | undefined;
  try {
    const deadline = Date.now() + timeoutMs;
    while (!job) {
      const [row] = await sql.query<{ runs: number; ok: boolean | null; seconds: number; report: unknown }>(
        `SELECT runs, last_ok AS ok, extract(epoch FROM last_finished_at - last_started_at)::float AS seconds,
           last_report AS report
         FROM scheduled_jobs WHERE name = 'retention' AND last_started_at > $1::timestamptz
           AND last_finished_at >= last_started_at`,
        [clock?.now],
      );
      if (row) job = row;
      else if (Date.now() > deadline) throw new Error("the scheduled retention run did not finish in time");
      else await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await stop();
    rmSync(archiveDir, { recursive: true, force: true });
  }
  if (!job.ok) throw new Error(`the scheduled retention run failed: ${JSON.stringify(job.report)}`);
  const after = perThread(await measure(sql, "finished"), counts.finished);
  const pendingAfter = await fingerprintPending(sql);
  // A running server also escalates the old clones' overdue decisions (the deadline sweep: the decision row and its
  // audit entry): that is not retention's doing, and is reported apart. Any other change to a pending thread counts.
  const SWEPT = new Set(["decisions", "audit_log"]);
  let changed = 0;
  let escalated = 0;
  for (const [id, print] of pendingBefore) {
    const parts = (p: string | undefined) => new Set((p ?? "").split(";").filter(Boolean));
    const was = parts(print);
    const tables = [...parts(pendingAfter.get(id))]
      .filter((p) => !was.has(p))
      .map((p) => p.split(":")[0] ?? "");
    if (tables.length === 0) continue;
    if (tables.every((t) => SWEPT.has(t))) escalated += 1;
    else changed += 1;
  }
  log(
    `pending threads: ${changed} touched by retention, ${escalated} escalated by the deadline sweep meanwhile`,
  );
  const pages = await checkHistoryPages(database, historySample);
  const archived = Number(
    (job.report as { removed?: { threads_archived?: number } } | null)?.removed?.threads_archived ?? 0,
  );
  return {
    threads: total,
    finished_threads: counts.finished,
    pending_threads: counts.pending,
    simulated_days: days,
    bytes_per_finished_thread_before: before.total,
    bytes_per_finished_thread_after: after.total,
    ratio: Math.round((after.total / before.total) * 1000) / 1000,
    pending_threads_changed: changed,
    per_step: [
      { step: "before", bytes_per_finished_thread: before },
      { step: "scheduled", bytes_per_finished_thread: after },
    ],
    history_pages_checked: pages.checkpoints,
    truncated_roots_seen: pages.truncatedRoots,
    archived_threads: archived,
    scheduled_run_seconds: Math.round(job.seconds * 10) / 10,
  };
}
