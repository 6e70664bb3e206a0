import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type pg from "pg";
import { countHeard } from "@/e2e/support/heard";

/** Nearest-rank percentile of `values` (ms), `p` in 0..100. NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const round = (value: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

export interface RunResult {
  threads: number;
  elapsedMs: number;
  /** Per-item latency in ms, in completion order. */
  latencies: number[];
}

/** Run `fn(0..n-1)` with at most `concurrency` in flight; `concurrency` 1 is strictly sequential. */
export async function runPool(
  n: number,
  concurrency: number,
  fn: (i: number) => Promise<void>,
): Promise<RunResult> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      for (;;) {
        const i = next++;
        if (i >= n) return;
        const t0 = performance.now();
        await fn(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { threads: n, elapsedMs: performance.now() - start, latencies };
}

/** Time `fn` `samples` times, sequentially, after `warmup` untimed calls. Returns latencies (ms). */
export async function sample(
  samples: number,
  warmup: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * Counts every statement sent on every connection of a `pg` pool: each client the pool opens gets its `query`
 * wrapped, so `pool.query(...)` (which checks a client out and calls `client.query`) and `client.query(...)` on a
 * client from `pool.connect()` — BEGIN / COMMIT / ROLLBACK included — are each counted exactly once.
 * Attach before the pool opens its first connection.
 */
export function countPoolStatements(pool: pg.Pool): { statements: number } {
  const counter = { statements: 0 };
  pool.on("connect", (client) => {
    const target = client as unknown as { query: (...args: unknown[]) => unknown };
    const original = target.query;
    target.query = function (this: unknown, ...args: unknown[]) {
      counter.statements += 1;
      return original.apply(this, args);
    };
  });
  return counter;
}

export const SAVER_METHODS = ["getTuple", "put", "putWrites", "list"] as const;
export type SaverMethod = (typeof SAVER_METHODS)[number];
export type CallCounts = Record<SaverMethod, number>;

/** Wrap the saver instance's public methods so every call LangGraph (or the bench) makes is counted. */
export function countSaverCalls(saver: BaseCheckpointSaver): CallCounts {
  return countHeard(
    saver,
    SAVER_METHODS.map((method) => [method, method] as const),
  );
}

export function diffCounts(after: CallCounts, before: CallCounts): CallCounts {
  return {
    getTuple: after.getTuple - before.getTuple,
    put: after.put - before.put,
    putWrites: after.putWrites - before.putWrites,
    list: after.list - before.list,
  };
}

export const totalCalls = (c: CallCounts): number => c.getTuple + c.put + c.putWrites + c.list;

export function perThread(c: CallCounts, threads: number): CallCounts {
  return {
    getTuple: round(c.getTuple / threads),
    put: round(c.put / threads),
    putWrites: round(c.putWrites / threads),
    list: round(c.list / threads),
  };
}

/** Left/right padded plain-text table. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (typeof c === "number" ? fmt(c) : c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? "").length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join("  ");
  return [line(cells[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join(
    "\n",
  );
}

export function fmt(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** CPU time (user + system, ms) a process has consumed so far, from /proc (Linux); NaN when unreadable. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** USER_HZ; 100 on every mainstream Linux build. */
const CLOCK_TICKS = 100;

/** CPU time (ms) all cores have spent busy since boot, from /proc/stat (Linux); NaN when unreadable. */
export function systemBusyMs(): number {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    // cpu  user nice system idle iowait irq softirq steal ...
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (
      (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) /
      CLOCK_TICKS
    );
  } catch {
    return Number.NaN;
  }
}

/** CPU ms (user + system) and RSS bytes of every live process whose process group is `pgid`. */
export function groupUsage(pgid: number): { cpuMs: number; rssBytes: number } {
  let cpuMs = 0;
  let rssBytes = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // After "(comm) ": state(3) ppid(4) pgrp(5) … utime(14) stime(15) … rss(24), 1-based over the whole line.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(f[2]) !== pgid) continue;
    cpuMs += ((Number(f[11]) + Number(f[12])) * 1000) / 100;
    rssBytes += Number(f[21]) * 4096;
  }
  return { cpuMs, rssBytes };
}

export function pidCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * CPU of one database's Postgres backends between `start()` and `stop()`: the backends are polled (a backend that
 * comes and goes between two polls is missed; the pools here keep theirs open), and each one's CPU counts from the
 * first poll that saw it — or from zero when it connected after `start()`.
 */
export class BackendCpu {
  private readonly base = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  /** Backends that connected after `start()` (each one a fork, a login and cold caches). */
  opened = 0;
  constructor(
    private readonly admin: pg.Pool,
    private readonly database: string,
  ) {}
  private async poll() {
    const { rows } = await this.admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
      [this.database],
    );
    for (const { pid } of rows) {
      const cpu = pidCpuMs(pid);
      if (cpu === undefined) continue;
      if (!this.base.has(pid)) {
        this.base.set(pid, this.started ? 0 : cpu);
        if (this.started) this.opened += 1;
      }
      this.last.set(pid, cpu);
    }
  }
  async start() {
    this.base.clear();
    this.last.clear();
    this.started = false;
    this.opened = 0;
    await this.poll();
    this.started = true;
    this.timer = setInterval(() => void this.poll().catch(() => {}), 200);
  }
  async stop(): Promise<number> {
    clearInterval(this.timer);
    await this.poll();
    let total = 0;
    for (const [pid, cpu] of this.last) total += cpu - (this.base.get(pid) ?? cpu);
    return total;
  }
}

/**
 * A bench's command line: `--quick`, flags, numeric options (`--threads N`), word options (`--peer <kind>`) and
 * directory options (`--cpu-prof <dir>`).
 */
export function benchArgs(argv: string[] = process.argv.slice(2)) {
  const after = (name: string) => argv[argv.indexOf(name) + 1];
  return {
    quick: argv.includes("--quick"),
    has: (name: string) => argv.includes(name),
    number: (name: string, fallback: number) => (argv.includes(name) ? Number(after(name)) : fallback),
    string: (name: string, fallback: string) => (argv.includes(name) ? (after(name) ?? "") : fallback),
    dir: (name: string) => (argv.includes(name) ? resolve(after(name) ?? "prof") : null),
  };
}
