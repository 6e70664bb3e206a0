/**
 * `npm run bench:peer [-- --quick] [-- --threads N] [-- --rounds R]`: our server (`next start`, the AG-UI endpoint,
 * signed in) side by side with LangGraph's own API server for JS (`langgraphjs dev` from `@langchain/langgraph-cli`,
 * in-memory), both serving the app's refund graph with the offline model against their own fresh Postgres database.
 *
 * The peer is installed on demand into a throw-away folder (`npm install --prefix <tmp>`; it is not a dependency of
 * the app) and loads `e2e/bench/peer/graph.ts`. The flow is the same on both sides: create the thread and run it to
 * the approval interrupt, resume with an approval (to the reply confirmation), resume with "send" (to the end). The
 * measured leg is the approval's resume: time to its first event and to its last event (the peer keeps a stream open
 * for a while after its last event, so the last event's arrival is what counts, not the stream's close).
 *
 * Rounds interleave the two servers (ours, peer; then peer, ours; …); each round runs a sequential phase and a phase
 * at concurrency 10 per server. CPU per thread counts every process of the server's process group (from /proc)
 * plus its database's Postgres backends (polled from pg_stat_activity). RSS is the process group's, after the run.
 * After the rounds, `--c10-pairs N` adjacent pairs of concurrency-10 blocks (default 12; 4 with `--quick`) give the CPU
 * ratio again from blocks run seconds apart (the machine's speed drifts between rounds minutes apart).
 * `--idle-probe <seconds>` then has each side alone run bursts of concurrency-10 blocks (`--c10-pair-block` threads
 * each) with that long idle between them: what a ticket costs right after the machine idled.
 * The last line is one JSON object; ratios are ours ÷ peer.
 * `--cpu-prof <dir>` makes our server write V8 CPU profiles into <dir> when it stops.
 * The peer is LangGraph's embeddable API server with its own Postgres checkpointer by default (`--peer embed-postgres`,
 * `e2e/bench/peer/embed.ts`); `--peer embed-memory` keeps its checkpoints in memory, `--peer dev` is `langgraphjs dev`.
 * Our claim → first event figure (p50, p95: from a resume run's claim to its first event in the log) is read from our
 * database after the rounds.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { createTicket } from "@/e2e/api/client";
import { prepareDatabase } from "@/e2e/api/setup";
import { authHeaders } from "@/e2e/support/auth";
import { ADMIN_URL } from "@/e2e/support/pg";
import { freePort, startTestServer, type TestServer } from "@/e2e/support/server";
import { BackendCpu, benchArgs, groupUsage, percentile, round } from "./measure";

const PEER_PACKAGE = "@langchain/langgraph-cli@1.5.1";
const CONCURRENCY = 10;

const args = benchArgs();
const quick = args.quick;
const THREADS = args.number("--threads", quick ? 20 : 60);
const ROUNDS = args.number("--rounds", quick ? 2 : 3);
/** `--cpu-prof <dir>`: our server writes V8 CPU profiles there (on exit) for finding where its time goes. */
/** `--ours-only`: skip the peer (for quick before/after figures of our server while cutting its cost). */
const oursOnly = args.has("--ours-only");
/** `--log-statements`: Postgres logs every statement of our server's database (to count round trips per thread). */
const logStatements = args.has("--log-statements");
const cpuProfDir = args.dir("--cpu-prof");
/**
 * `--pg-stats`: where Postgres spends our side's time — the statements of our database that took the most execution
 * and planning time per ticket over the measured rounds, and on how many of its calls each was planned, from
 * `pg_stat_statements` (it must be in the server's `shared_preload_libraries`, with `track_planning` on for the
 * planning figures; without it the bench says so and goes on).
 */
const pgStats = args.has("--pg-stats");
/**
 * Adjacent pairs of concurrency-10 blocks (ours then the peer, or the peer then ours, alternately) after the rounds: the
 * machine's speed drifts over minutes (one run's first round found both sides 40% slower than its second), so a ratio of
 * phases taken minutes apart carries that drift; a pair's two blocks run seconds apart. Reported beside the rounds'
 * ratio as the trimmed mean of the pairs' ratios with its bootstrap interval.
 */
const C10_PAIRS = args.number("--c10-pairs", quick ? 4 : 12);
/**
 * `--peer <kind>`: which LangGraph server is the peer. `embed-postgres` (default): LangGraph's embeddable API server
 * (`createEmbedServer`, the same thread and run routes) with LangGraph's own `PostgresSaver` on the peer's database —
 * the durable server a team would embed instead of ours (`e2e/bench/peer/embed.ts`). `embed-memory`: the same with
 * `MemorySaver`. `dev`: `langgraphjs dev`, everything in memory.
 */
const PEER_KINDS = ["dev", "embed-memory", "embed-postgres"] as const;
type PeerKind = (typeof PEER_KINDS)[number];
const peerKind = args.string("--peer", "embed-postgres") as PeerKind;
if (!PEER_KINDS.includes(peerKind)) throw new Error(`--peer: one of ${PEER_KINDS.join(", ")}`);
/** The peer as the report names it. */
const PEER_LABEL = peerKind === "dev" ? `${PEER_PACKAGE} dev` : `${PEER_PACKAGE}'s API, ${peerKind}`;
const C10_PAIR_BLOCK = args.number("--c10-pair-block", 20);
/** Pairs of blocks (and requests per block) for the signed-in overhead. */
const OVERHEAD_PAIRS = args.number("--overhead-pairs", quick ? 150 : 300);
const OVERHEAD_BLOCK = args.number("--overhead-block", 20);
/**
 * `--idle-probe <seconds>`: after the pairs, each side alone (the other idle too) runs three concurrency-10 blocks, sits
 * idle that long, and again, three times: whether a side costs more per ticket right after the machine idled (off
 * unless asked).
 */
const IDLE_PROBE_S = args.number("--idle-probe", 0);
const IDLE_PROBE_BURSTS = 3;
const IDLE_PROBE_BLOCKS = 3;

// ——— the two servers ———

interface Leg {
  /** ms from sending the request to the first event. */
  firstMs: number;
  /** ms from sending the request to the last event. */
  lastMs: number;
  events: { event?: string; data: unknown }[];
}

/** POST and read a server-sent event stream to its end, timing the first and the last event. */
async function streamPost(url: string, headers: Record<string, string>, body: unknown): Promise<Leg> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
  if (res.status !== 200 || !res.body) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  const events: Leg["events"] = [];
  let firstMs = Number.NaN;
  let lastMs = Number.NaN;
  let buffer = "";
  const decoder = new TextDecoder();
  const flush = (block: string) => {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length === 0) return;
    const now = performance.now() - t0;
    if (Number.isNaN(firstMs)) firstMs = now;
    lastMs = now;
    events.push({ event, data: JSON.parse(data.join("\n")) });
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, "\n");
    for (let i = buffer.indexOf("\n\n"); i >= 0; i = buffer.indexOf("\n\n")) {
      flush(buffer.slice(0, i));
      buffer = buffer.slice(i + 2);
    }
  }
  if (buffer.trim()) flush(buffer);
  return { firstMs, lastMs, events };
}

interface Side {
  name: "ours" | "peer";
  url: string;
  pgid: number;
  database: string;
  /** One thread through the flow; returns the approval resume's leg. */
  thread(order: string): Promise<Leg>;
  stop(): Promise<void>;
}

async function oursSide(server: TestServer, database: string, pgid: number): Promise<Side> {
  const intake = await authHeaders(server.url, "intake");
  const supervisor = await authHeaders(server.url, "supervisor");
  const run = async (threadId: string, headers: Record<string, string>, body: Record<string, unknown>) => {
    const leg = await streamPost(`${server.url}/api/threads/${threadId}/runs`, headers, {
      threadId,
      runId: crypto.randomUUID(),
      messages: [],
      tools: [],
      context: [],
      ...body,
    });
    const last = leg.events[leg.events.length - 1]?.data as
      | { type?: string; outcome?: { type: string; interrupts?: { id: string }[] } }
      | undefined;
    if (last?.type !== "RUN_FINISHED") throw new Error(`ours: run ended with ${JSON.stringify(last)}`);
    return { leg, outcome: last.outcome };
  };
  const interruptId = (outcome: { interrupts?: { id: string }[] } | undefined) => {
    const id = outcome?.interrupts?.[0]?.id;
    if (!id) throw new Error(`ours: expected an interrupt, got ${JSON.stringify(outcome)}`);
    return id;
  };
  return {
    name: "ours",
    url: server.url,
    pgid,
    database,
    async thread(order) {
      const message = `Please refund ${order}, the television arrived broken.`;
      const threadId = await createTicket(server.url, message);
      const paused = await run(threadId, intake, {
        messages: [{ id: crypto.randomUUID(), role: "user", content: message }],
      });
      const approved = await run(threadId, supervisor, {
        resume: [
          { interruptId: interruptId(paused.outcome), status: "resolved", payload: { decision: "approve" } },
        ],
      });
      const done = await run(threadId, supervisor, {
        resume: [
          { interruptId: interruptId(approved.outcome), status: "resolved", payload: { choice: "send" } },
        ],
      });
      if (done.outcome?.type !== "success") throw new Error(`ours: ended ${JSON.stringify(done.outcome)}`);
      return approved.leg;
    },
    stop: () => server.stop(),
  };
}

/** Install the peer's CLI into a throw-away folder (reused while its version matches). */
function installPeer(dir: string): string {
  const bin = join(dir, "node_modules", ".bin", "langgraphjs");
  const pkg = join(dir, "node_modules", "@langchain", "langgraph-cli", "package.json");
  const wanted = PEER_PACKAGE.split("@").pop();
  if (existsSync(bin) && JSON.parse(readFileSync(pkg, "utf8")).version === wanted) return bin;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bench-peer", private: true }));
  console.log(`installing ${PEER_PACKAGE} into ${dir}…`);
  const r = spawnSync("npm", ["install", "--prefix", dir, PEER_PACKAGE, "--no-audit", "--no-fund"], {
    stdio: "inherit",
  });
  if (r.status !== 0) throw new Error("npm install of the peer failed");
  return bin;
}

async function peerSide(dir: string, databaseUrl: string, database: string): Promise<Side> {
  const bin = installPeer(dir);
  const port = Number(process.env.PEER_PORT) || (await freePort());
  const child =
    peerKind === "dev" ? startDevPeer(bin, dir, databaseUrl, port) : startEmbedPeer(dir, databaseUrl, port);
  return peerClient(child, port, database);
}

/** `langgraphjs dev`: LangGraph's API server for JS with everything in memory. */
function startDevPeer(bin: string, dir: string, databaseUrl: string, port: number): ChildProcess {
  const project = join(dir, "project");
  // The dev server keeps its in-memory threads in files here and loads them at start: an earlier run's threads
  // would make every later run's peer slower (it rewrites them all as they grow). Each run starts it empty, as ours
  // starts on a fresh database.
  rmSync(join(project, ".langgraph_api"), { recursive: true, force: true });
  mkdirSync(project, { recursive: true });
  const graphFile = resolve("e2e/bench/peer/graph.ts");
  writeFileSync(
    join(project, "langgraph.json"),
    JSON.stringify({ node_version: "20", graphs: { refund: `${graphFile}:refund` }, env: {} }),
  );
  // Run from this tree so the loader finds tsconfig.json (the `@/` paths); `server-only` needs react-server.
  return spawn(
    bin,
    [
      "dev",
      "-c",
      join(project, "langgraph.json"),
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--no-browser",
      "--no-reload",
    ],
    {
      cwd: process.cwd(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        NODE_OPTIONS: "--conditions=react-server",
        BROWSER: "none",
        LANGSMITH_TRACING: "false",
        LANGCHAIN_TRACING_V2: "false",
        PEER_DATABASE_URL: databaseUrl,
      },
    },
  );
}

/** LangGraph's embeddable API server on the same graph, with `MemorySaver` or LangGraph's own `PostgresSaver`. */
function startEmbedPeer(dir: string, databaseUrl: string, port: number): ChildProcess {
  return spawn(
    process.execPath,
    ["--conditions=react-server", "--import", "tsx", resolve("e2e/bench/peer/embed.ts")],
    {
      cwd: process.cwd(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        LANGSMITH_TRACING: "false",
        LANGCHAIN_TRACING_V2: "false",
        PEER_DIR: dir,
        PEER_DATABASE_URL: databaseUrl,
        PEER_CHECKPOINTER: peerKind === "embed-postgres" ? "postgres" : "memory",
        PORT: String(port),
      },
    },
  );
}

/** The peer's side of the bench: wait until it answers, then run tickets through its thread and run routes. */
async function peerClient(child: ChildProcess, port: number, database: string): Promise<Side> {
  let output = "";
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`peer exited early (${child.exitCode}):\n${output}`);
    try {
      if ((await fetch(`${url}/ok`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`peer did not start in 120 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const stream = async (threadId: string, body: Record<string, unknown>) => {
    const leg = await streamPost(
      `${url}/threads/${threadId}/runs/stream`,
      {},
      {
        assistant_id: "refund",
        stream_mode: ["updates", "messages-tuple"],
        ...body,
      },
    );
    const error = leg.events.find((e) => e.event === "error");
    if (error) throw new Error(`peer: ${JSON.stringify(error.data)}`);
    const interrupt = leg.events.find(
      (e) => e.event === "updates" && typeof e.data === "object" && e.data && "__interrupt__" in e.data,
    );
    return { leg, interrupted: Boolean(interrupt) };
  };
  return {
    name: "peer",
    url,
    pgid: child.pid as number,
    database,
    async thread(order) {
      const message = `Please refund ${order}, the television arrived broken.`;
      const res = await fetch(`${url}/threads`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({}),
      });
      if (res.status !== 200) throw new Error(`peer: create thread ${res.status} ${await res.text()}`);
      const { thread_id: threadId } = (await res.json()) as { thread_id: string };
      const first = await stream(threadId, {
        input: {
          messages: [{ type: "human", id: crypto.randomUUID(), content: message }],
          customerMessage: message,
          orderRef: null,
        },
      });
      if (!first.interrupted) throw new Error("peer: the first run did not stop at the approval");
      const approved = await stream(threadId, { command: { resume: { decision: "approve" } } });
      if (!approved.interrupted) throw new Error("peer: the approval did not stop at the reply confirmation");
      const done = await stream(threadId, { command: { resume: { choice: "send" } } });
      if (done.interrupted) throw new Error("peer: the thread did not finish");
      return approved.leg;
    },
    async stop() {
      try {
        process.kill(-(child.pid as number), "SIGTERM");
      } catch {
        // gone
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {
        // gone
      }
    },
  };
}

// ——— phases ———

/** CPU ms (server + database) per thread of one phase. */
const perThread = (p: { threads: number; cpuMs: number }) => p.cpuMs / Math.max(1, p.threads);

/** "server + database" CPU ms per thread of one phase. */
const cpuSplit = (p: { threads: number; cpuMs: number; dbCpuMs: number }) =>
  `${round((p.cpuMs - p.dbCpuMs) / Math.max(1, p.threads), 1)} + ${round(p.dbCpuMs / Math.max(1, p.threads), 1)}`;

interface Phase {
  threads: number;
  errors: number;
  seconds: number;
  cpuMs: number;
  /** The part of cpuMs spent in the database's backends. */
  dbCpuMs: number;
  /** CPU ms the other side's server spent meanwhile (idle, it should be next to none). */
  bystanderCpuMs: number;
  /** Database connections the server opened during the phase. */
  opened: number;
  first: number[];
  last: number[];
}

async function phase(
  side: Side,
  admin: pg.Pool,
  orders: string[],
  concurrency: number,
  bystander?: Side,
): Promise<Phase> {
  const backends = new BackendCpu(admin, side.database);
  await backends.start();
  const cpu0 = groupUsage(side.pgid).cpuMs;
  const other0 = bystander ? groupUsage(bystander.pgid).cpuMs : 0;
  const first: number[] = [];
  const last: number[] = [];
  let errors = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < orders.length; i = next++) {
        try {
          const leg = await side.thread(orders[i] as string);
          first.push(leg.firstMs);
          last.push(leg.lastMs);
        } catch (error) {
          errors += 1;
          if (errors <= 3) console.error(`  ${side.name} error: ${(error as Error).message.slice(0, 500)}`);
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const serverCpu = groupUsage(side.pgid).cpuMs - cpu0;
  const bystanderCpuMs = bystander ? groupUsage(bystander.pgid).cpuMs - other0 : 0;
  const pgCpu = await backends.stop();
  return {
    threads: first.length,
    errors,
    seconds,
    cpuMs: serverCpu + pgCpu,
    dbCpuMs: pgCpu,
    bystanderCpuMs,
    opened: backends.opened,
    first,
    last,
  };
}

function merge(phases: Phase[]) {
  const threads = phases.reduce((n, p) => n + p.threads, 0);
  const seconds = phases.reduce((n, p) => n + p.seconds, 0);
  const cpuMs = phases.reduce((n, p) => n + p.cpuMs, 0);
  const dbCpuMs = phases.reduce((n, p) => n + p.dbCpuMs, 0);
  const first = phases.flatMap((p) => p.first);
  const last = phases.flatMap((p) => p.last);
  return {
    threads,
    errors: phases.reduce((n, p) => n + p.errors, 0),
    threads_per_s: round(threads / seconds, 2),
    resume_first_event_ms: { p50: round(percentile(first, 50), 1), p95: round(percentile(first, 95), 1) },
    resume_last_event_ms: { p50: round(percentile(last, 50), 1), p95: round(percentile(last, 95), 1) },
    cpu_ms_per_thread: round(cpuMs / Math.max(1, threads), 1),
    /** The split of cpu_ms_per_thread: the server's process group, and its database's backends. */
    server_cpu_ms_per_thread: round((cpuMs - dbCpuMs) / Math.max(1, threads), 1),
    database_cpu_ms_per_thread: round(dbCpuMs / Math.max(1, threads), 1),
  };
}

/**
 * CPU ns of every live process whose process group is `pgid`, plus the given extra pids, from each thread's
 * `/proc/<pid>/task/<tid>/schedstat` (nanoseconds on CPU): /proc's stat counts in 10 ms ticks, too coarse to see a
 * fraction of a millisecond per request.
 */
function cpuNs(pgid: number, extraPids: number[]): number {
  const pids = new Set(extraPids);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pgid) pids.add(Number(entry));
    } catch {
      // gone
    }
  }
  let ns = 0;
  for (const pid of pids) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread ended
      }
    }
  }
  return ns;
}

/**
 * CPU (server process group + its Postgres backends, in ns from schedstat) of a signed-in request beyond an
 * anonymous one: the same admin-only route asked by a signed-in viewer (the session is verified, then 403) and with
 * no cookie (401, no session work at all), in many interleaved pairs of small blocks (signed first, then anonymous
 * first, …). One pair's difference is the cost plus noise (a GC, another process, landing in one block of the pair),
 * as likely either way; a stray block is far off, so the estimate is the 10%-trimmed mean over pairs, with its 95%
 * bootstrap interval (plus the plain mean of all requests and the median pair). The point holds when the interval's
 * upper end is within the target.
 */
async function signedInOverhead(
  side: Side,
  admin: pg.Pool,
  cookie: string,
  blocks: number,
  perBlock: number,
) {
  const url = `${side.url}/api/admin/users`;
  const cost = { signed: 0, anonymous: 0 };
  const differences: number[] = [];
  const backendPids = async () =>
    (
      await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
        [side.database],
      )
    ).rows.map((r) => r.pid);
  for (let b = 0; b < blocks; b++) {
    const pair = { signed: 0, anonymous: 0 };
    for (const kind of b % 2 === 0
      ? (["signed", "anonymous"] as const)
      : (["anonymous", "signed"] as const)) {
      const pids = await backendPids();
      const before = cpuNs(side.pgid, pids);
      for (let i = 0; i < perBlock; i++) {
        const res = await fetch(url, kind === "signed" ? { headers: { cookie } } : {});
        await res.arrayBuffer();
        const expected = kind === "signed" ? 403 : 401;
        if (res.status !== expected) throw new Error(`signed-in overhead: ${kind} got ${res.status}`);
      }
      // A backend that connected during the block counts from zero (it was not in `before`).
      const ms = (cpuNs(side.pgid, [...new Set([...pids, ...(await backendPids())])]) - before) / 1e6;
      pair[kind] = ms / perBlock;
      cost[kind] += ms;
    }
    differences.push(pair.signed - pair.anonymous);
  }
  const n = blocks * perBlock;
  const sorted = [...differences].sort((a, b) => a - b);
  return {
    signed_in_cpu_ms_per_request: round(cost.signed / n, 3),
    anonymous_cpu_ms_per_request: round(cost.anonymous / n, 3),
    signed_in_overhead_cpu_ms: round((cost.signed - cost.anonymous) / n, 3),
    signed_in_overhead_trimmed_mean_ms: round(trimmedMean(differences), 3),
    signed_in_overhead_ci95_ms: bootstrapInterval(differences, trimmedMean).map((v) => round(v, 3)),
    signed_in_overhead_median_ms: round(percentile(sorted, 50), 3),
    signed_in_overhead_p25_p75_ms: [round(percentile(sorted, 25), 3), round(percentile(sorted, 75), 3)],
    signed_in_overhead_pairs: blocks,
    signed_in_overhead_requests_per_block: perBlock,
  };
}

/** Mean of the values between the 10th and the 90th percentile: a stray block (a GC, another process) moves it little. */
function trimmedMean(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const cut = Math.floor(sorted.length / 10);
  const kept = sorted.slice(cut, sorted.length - cut);
  return kept.reduce((a, b) => a + b, 0) / kept.length;
}

/** 95% percentile-bootstrap interval of `statistic` over `values` (a fixed seed: the same data, the same interval). */
function bootstrapInterval(
  values: readonly number[],
  statistic: (sample: readonly number[]) => number,
  resamples = 4000,
): [number, number] {
  let seed = 0x9e3779b9;
  const random = () => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const estimates: number[] = [];
  const sample = new Array<number>(values.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(random() * values.length)]!;
    estimates.push(statistic(sample));
  }
  estimates.sort((a, b) => a - b);
  return [percentile(estimates, 2.5), percentile(estimates, 97.5)];
}

/** Rows written per table of our database (`pg_stat_user_tables`): inserted, updated, of which heap-only (HOT). */
type TableWrites = Map<string, { ins: number; upd: number; hot: number }>;

async function tableWrites(ours: RowsOf): Promise<TableWrites> {
  const rows = await ours(
    `SELECT schemaname || '.' || relname AS name, n_tup_ins::float8 AS ins, n_tup_upd::float8 AS upd,
       n_tup_hot_upd::float8 AS hot FROM pg_stat_user_tables`,
  );
  return new Map(
    rows.map((r) => [String(r.name), { ins: Number(r.ins), upd: Number(r.upd), hot: Number(r.hot) }]),
  );
}

type RowsOf = (text: string) => Promise<Record<string, unknown>[]>;

/**
 * `pg_stat_statements` of one database: reset when opened, read when reported (per ticket, the heaviest first); with
 * the rows each table took meanwhile (an update that is not heap-only writes an entry into every index of its table).
 */
class StatementStats {
  private constructor(
    private readonly admin: pg.Pool,
    private readonly dbid: number,
    private readonly ours: RowsOf,
    private readonly writesAtStart: TableWrites,
  ) {}

  static async open(admin: pg.Pool, database: string, ours: RowsOf): Promise<StatementStats | undefined> {
    const loaded = await admin.query<{ on: boolean }>(
      "SELECT 'pg_stat_statements' = ANY(string_to_array(current_setting('shared_preload_libraries'), ',')) AS on",
    );
    if (!loaded.rows[0]?.on) {
      console.log("--pg-stats: pg_stat_statements is not in shared_preload_libraries; no statement figures");
      return undefined;
    }
    await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    const { rows } = await admin.query<{ oid: number }>("SELECT oid FROM pg_database WHERE datname = $1", [
      database,
    ]);
    const dbid = rows[0]?.oid as number;
    await admin.query("SELECT pg_stat_statements_reset(0, $1, 0)", [dbid]);
    // A backend reports its table counts within a second of going idle.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return new StatementStats(admin, dbid, ours, await tableWrites(ours));
  }

  async report(tickets: number, top = 25): Promise<void> {
    const { rows } = await this.admin.query<{
      calls: string;
      plans: string;
      exec: number;
      plan: number;
      text: string;
    }>(
      `SELECT calls, plans, total_exec_time AS exec, total_plan_time AS plan,
         left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS text
       FROM pg_stat_statements WHERE dbid = $1 ORDER BY total_exec_time + total_plan_time DESC`,
      [this.dbid],
    );
    const n = Math.max(1, tickets);
    const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((t, r) => t + f(r), 0);
    console.log(
      `Postgres time per ticket (pg_stat_statements, ${tickets} measured tickets; wall time in the executor, lock ` +
        `waits included): execution ${round(sum((r) => r.exec) / n, 2)} ms, planning ` +
        `${round(sum((r) => r.plan) / n, 2)} ms, ${round(sum((r) => Number(r.calls)) / n, 1)} statements`,
    );
    for (const r of rows.slice(0, top)) {
      console.log(
        `  ${round(Number(r.calls) / n, 2)}× exec ${round(r.exec / n, 3)} + plan ${round(r.plan / n, 3)} ms ` +
          `(planned on ${r.plans} of ${r.calls} calls)  ${r.text}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const end = await tableWrites(this.ours);
    const tables = [...end].map(([name, e]) => {
      const s = this.writesAtStart.get(name) ?? { ins: 0, upd: 0, hot: 0 };
      return { name, ins: (e.ins - s.ins) / n, upd: (e.upd - s.upd) / n, hot: (e.hot - s.hot) / n };
    });
    console.log("Rows written per ticket (pg_stat_user_tables): inserted, updated (of which heap-only)");
    for (const t of tables.filter((t) => t.ins + t.upd > 0).sort((a, b) => b.ins + b.upd - (a.ins + a.upd))) {
      console.log(
        `  ${t.name}: ${round(t.ins, 2)} inserted, ${round(t.upd, 2)} updated (${round(t.hot, 2)} HOT)`,
      );
    }
  }
}

// ——— main ———

// The build the server will read (next.config.ts takes NEXT_DIST_DIR as its distDir).
if (!existsSync(join(process.env.NEXT_DIST_DIR || ".next", "BUILD_ID"))) {
  console.log("building the server (next build)…");
  if (spawnSync("node_modules/.bin/next", ["build"], { stdio: "inherit" }).status !== 0) process.exit(1);
}
const perRound = THREADS * 2;
const total =
  ROUNDS * perRound +
  20 +
  (oursOnly ? 0 : C10_PAIRS * C10_PAIR_BLOCK) +
  (IDLE_PROBE_S > 0 ? IDLE_PROBE_BURSTS * IDLE_PROBE_BLOCKS * C10_PAIR_BLOCK : 0);
const peerDir = process.env.PEER_DIR || join(tmpdir(), "hitl-bench-peer");
const databases = await Promise.all([prepareDatabase("benchours"), prepareDatabase("benchpeer")]);
const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 2 });
for (const { sql } of databases) {
  await sql.rows(
    `INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
     SELECT 'ORD-' || (2000 + g), 'Customer ' || g, 'c' || g || '@example.com', 50000, 'EUR', now() - interval '2 days',
       'card', '[{"sku":"TV","name":"Television","quantity":1,"unitCents":50000}]'::jsonb, 'delivered'
     FROM generate_series(0, $1 - 1) AS g`,
    [total],
  );
}
const nameOf = (url: string) => new URL(url).pathname.slice(1);
const sides: Side[] = [];
let exitCode = 0;
try {
  const [oursDb, peerDb] = databases as [(typeof databases)[0], (typeof databases)[0]];
  if (logStatements) {
    await oursDb.sql.rows(`ALTER DATABASE "${nameOf(oursDb.url)}" SET log_statement = 'all'`);
    console.log(`logging every statement of database ${nameOf(oursDb.url)}`);
  }
  const server = await startTestServer({
    databaseUrl: oursDb.url,
    env: {
      DATABASE_POOL_MAX: "20",
      // The production default (lib/platform/env.ts), not the test servers' 10 s.
      DATABASE_POOL_IDLE_MS: "300000",
    },
    ...(cpuProfDir ? { wrap: [process.execPath, "--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] } : {}),
  });
  sides.push(await oursSide(server, nameOf(oursDb.url), server.pid));
  if (!oursOnly) sides.push(await peerSide(peerDir, peerDb.url, nameOf(peerDb.url)));
  const [ours, peer = ours] = sides as [Side, Side?];
  console.log(
    `bench:peer — ${ROUNDS} rounds × ${THREADS} threads per phase (sequential, concurrency ${CONCURRENCY}), ` +
      `ours ${ours.url} vs ${PEER_LABEL} ${peer.url}`,
  );
  // Each side's order ids: its own range in its own database.
  const ids = (offset: number, n: number) => Array.from({ length: n }, (_, i) => `ORD-${2000 + offset + i}`);
  let cursor = 0;
  const take = (n: number) => {
    const out = ids(cursor, n);
    cursor += n;
    return out;
  };
  // Warm-up (not measured): the same orders on both sides, each in its own database, at the measured concurrency
  // (so the first measured phase does not pay for opening the connections a concurrent phase needs).
  const warm = take(20);
  for (const side of sides) await phase(side, admin, warm, CONCURRENCY);
  const statements = pgStats
    ? await StatementStats.open(admin, nameOf(oursDb.url), (text) =>
        oursDb.sql.rows<Record<string, unknown>>(text),
      )
    : undefined;
  const results = {
    ours: { seq: [] as Phase[], c10: [] as Phase[] },
    peer: { seq: [] as Phase[], c10: [] as Phase[] },
  };
  for (let r = 0; r < ROUNDS; r++) {
    const seqOrders = take(THREADS);
    const concOrders = take(THREADS);
    for (const side of oursOnly ? [ours] : r % 2 === 0 ? [ours, peer] : [peer, ours]) {
      const other = sides.find((s) => s !== side);
      results[side.name].seq.push(await phase(side, admin, seqOrders, 1, other));
      results[side.name].c10.push(await phase(side, admin, concOrders, CONCURRENCY, other));
      console.log(
        `  round ${r + 1} ${side.name}: seq ${round(THREADS / results[side.name].seq.at(-1)!.seconds, 1)} threads/s, ` +
          `c${CONCURRENCY} ${round(THREADS / results[side.name].c10.at(-1)!.seconds, 1)} threads/s; ` +
          `CPU ms/thread (server + database) seq ${cpuSplit(results[side.name].seq.at(-1)!)}, ` +
          `c${CONCURRENCY} ${cpuSplit(results[side.name].c10.at(-1)!)}` +
          (other
            ? `; the idle ${other.name} meanwhile ${round(results[side.name].seq.at(-1)!.bystanderCpuMs)} + ` +
              `${round(results[side.name].c10.at(-1)!.bystanderCpuMs)} ms`
            : "") +
          `; connections opened ${results[side.name].seq.at(-1)!.opened} + ${results[side.name].c10.at(-1)!.opened}`,
      );
    }
  }
  const pairRatios: number[] = [];
  for (let i = 0; i < (oursOnly ? 0 : C10_PAIRS); i++) {
    const orders = take(C10_PAIR_BLOCK);
    const cpu: Partial<Record<Side["name"], number>> = {};
    for (const side of i % 2 === 0 ? [ours, peer] : [peer, ours]) {
      const p = await phase(side, admin, orders, CONCURRENCY);
      if (p.errors > 0) exitCode = 1;
      cpu[side.name] = perThread(p);
    }
    pairRatios.push((cpu.ours ?? 0) / (cpu.peer ?? 1));
  }
  const pairs =
    pairRatios.length > 0
      ? {
          ratio_cpu_per_thread_c10_pairs: round(trimmedMean(pairRatios), 2),
          ratio_cpu_per_thread_c10_pairs_ci95: bootstrapInterval(pairRatios, trimmedMean).map((v) =>
            round(v, 2),
          ),
          ratio_cpu_per_thread_c10_pairs_median: round(percentile(pairRatios, 50), 2),
          c10_pairs: pairRatios.length,
        }
      : {};
  if (pairRatios.length > 0) {
    console.log(
      `CPU per thread at c${CONCURRENCY}, ${pairRatios.length} adjacent pairs of ${C10_PAIR_BLOCK}-thread blocks: ` +
        `ours/peer ${pairs.ratio_cpu_per_thread_c10_pairs} (10%-trimmed mean of the pairs' ratios), 95% interval ` +
        `${pairs.ratio_cpu_per_thread_c10_pairs_ci95?.join("…")}, median pair ${pairs.ratio_cpu_per_thread_c10_pairs_median}; ` +
        `pairs ${pairRatios.map((r) => round(r, 2)).join(", ")}`,
    );
  }
  const idleProbe: Partial<Record<Side["name"], number[][]>> = {};
  if (IDLE_PROBE_S > 0) {
    // The same orders on both sides (each in its own database), so both sides' bursts do the same work.
    const bursts = Array.from({ length: IDLE_PROBE_BURSTS }, () =>
      Array.from({ length: IDLE_PROBE_BLOCKS }, () => take(C10_PAIR_BLOCK)),
    );
    for (const side of sides) {
      const perBurst: number[][] = [];
      for (const [b, blocks] of bursts.entries()) {
        if (b > 0) await new Promise((r) => setTimeout(r, IDLE_PROBE_S * 1000));
        const costs: string[] = [];
        const perBlock: number[] = [];
        for (const orders of blocks) {
          const p = await phase(side, admin, orders, CONCURRENCY);
          if (p.errors > 0) exitCode = 1;
          costs.push(cpuSplit(p));
          perBlock.push(round(perThread(p), 1));
        }
        perBurst.push(perBlock);
        console.log(
          `  idle probe ${side.name}, ${b === 0 ? "no idle before" : `after ${IDLE_PROBE_S} s idle`}: CPU ms/thread ` +
            `(server + database) of ${IDLE_PROBE_BLOCKS} blocks of ${C10_PAIR_BLOCK} at c${CONCURRENCY}: ${costs.join(" | ")}`,
        );
      }
      idleProbe[side.name] = perBurst;
    }
  }
  const idleProbeJson = IDLE_PROBE_S > 0 ? { idle_probe_s: IDLE_PROBE_S, idle_probe: idleProbe } : {};
  if (statements) {
    const tickets = results.ours.seq.concat(results.ours.c10).reduce((n, p) => n + p.threads, 0);
    await statements.report(tickets);
  }
  const overhead = await signedInOverhead(
    ours,
    admin,
    await authHeaders(ours.url, "viewer").then((h) => h.cookie ?? ""),
    OVERHEAD_PAIRS,
    OVERHEAD_BLOCK,
  );
  console.log(
    `signed-in request overhead (ours): ${overhead.signed_in_overhead_trimmed_mean_ms} ms CPU per request ` +
      `(10%-trimmed mean over ${OVERHEAD_PAIRS} pairs of ${OVERHEAD_BLOCK}-request blocks), 95% interval ` +
      `${overhead.signed_in_overhead_ci95_ms.join("…")} ms; median pair ${overhead.signed_in_overhead_median_ms}, ` +
      `p25–p75 ${overhead.signed_in_overhead_p25_p75_ms.join("…")} ms; mean of all requests ` +
      `${overhead.signed_in_overhead_cpu_ms} ms (signed-in ${overhead.signed_in_cpu_ms_per_request}, ` +
      `anonymous ${overhead.anonymous_cpu_ms_per_request})`,
  );
  if (oursOnly) {
    const o = { seq: merge(results.ours.seq), c10: merge(results.ours.c10) };
    const rssMb = round(groupUsage(ours.pgid).rssBytes / 2 ** 20, 0);
    for (const [label, p] of [
      ["seq", o.seq],
      [`c${CONCURRENCY}`, o.c10],
    ] as const) {
      console.log(
        `ours ${label}: ${p.threads_per_s} threads/s; resume last event p50 ${p.resume_last_event_ms.p50} ms; ` +
          `CPU ${p.cpu_ms_per_thread} ms/thread (server ${p.server_cpu_ms_per_thread} + database ` +
          `${p.database_cpu_ms_per_thread}); errors ${p.errors}`,
      );
    }
    console.log(
      JSON.stringify({
        bench: "peer",
        ours_only: true,
        ...overhead,
        ...idleProbeJson,
        ours: { ...o, rss_mb: rssMb },
      }),
    );
    process.exitCode = o.seq.errors + o.c10.errors > 0 ? 1 : 0;
  } else {
    const rss = { ours: groupUsage(ours.pgid).rssBytes, peer: groupUsage(peer.pgid).rssBytes };
    const summary = {
      ours: {
        seq: merge(results.ours.seq),
        c10: merge(results.ours.c10),
        rss_mb: round(rss.ours / 2 ** 20, 0),
      },
      peer: {
        seq: merge(results.peer.seq),
        c10: merge(results.peer.c10),
        rss_mb: round(rss.peer / 2 ** 20, 0),
      },
    };
    const ratio = (a: number, b: number) => round(a / b, 2);
    const line = (label: string, s: ReturnType<typeof merge>) =>
      `${label}: ${s.threads_per_s} threads/s; resume first event p50 ${s.resume_first_event_ms.p50} / p95 ` +
      `${s.resume_first_event_ms.p95} ms; last event p50 ${s.resume_last_event_ms.p50} / p95 ` +
      `${s.resume_last_event_ms.p95} ms; CPU ${s.cpu_ms_per_thread} ms/thread (server ${s.server_cpu_ms_per_thread} + ` +
      `database ${s.database_cpu_ms_per_thread}); errors ${s.errors}`;
    console.log(line("ours seq ", summary.ours.seq));
    console.log(line("peer seq ", summary.peer.seq));
    console.log(line(`ours c${CONCURRENCY}`, summary.ours.c10));
    console.log(line(`peer c${CONCURRENCY}`, summary.peer.c10));
    console.log(`RSS after the run: ours ${summary.ours.rss_mb} MB, peer ${summary.peer.rss_mb} MB`);
    // Our side only (the peer has no such log): from a resume run's claim (the row's start) to its first event written.
    const [claim] = await databases[0]!.sql.rows<{ p50: number | null; p95: number | null; n: number }>(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95,
         count(*)::int AS n
       FROM (SELECT extract(epoch FROM (SELECT min(e.created_at) FROM events e WHERE e.run_id = r.id) - r.started_at) * 1000 AS ms
             FROM runs r WHERE r.kind = 'resume' AND r.started_at IS NOT NULL) x WHERE ms IS NOT NULL`,
    );
    const claimToFirstEvent = {
      p50: round(Number(claim?.p50 ?? Number.NaN), 1),
      p95: round(Number(claim?.p95 ?? Number.NaN), 1),
    };
    console.log(
      `ours: claim → first event in the log p50 ${claimToFirstEvent.p50} / p95 ${claimToFirstEvent.p95} ms over ${claim?.n ?? 0} resumes`,
    );
    const errors =
      summary.ours.seq.errors + summary.ours.c10.errors + summary.peer.seq.errors + summary.peer.c10.errors;
    const ratios = {
      ratio_throughput_seq: ratio(summary.ours.seq.threads_per_s, summary.peer.seq.threads_per_s),
      ratio_throughput_c10: ratio(summary.ours.c10.threads_per_s, summary.peer.c10.threads_per_s),
      ratio_resume_last_event_p50_seq: ratio(
        summary.ours.seq.resume_last_event_ms.p50,
        summary.peer.seq.resume_last_event_ms.p50,
      ),
      ratio_resume_last_event_p50_c10: ratio(
        summary.ours.c10.resume_last_event_ms.p50,
        summary.peer.c10.resume_last_event_ms.p50,
      ),
      ratio_resume_last_event_p95_c10: ratio(
        summary.ours.c10.resume_last_event_ms.p95,
        summary.peer.c10.resume_last_event_ms.p95,
      ),
      ratio_first_event_p50_c10: ratio(
        summary.ours.c10.resume_first_event_ms.p50,
        summary.peer.c10.resume_first_event_ms.p50,
      ),
      ratio_cpu_per_thread_seq: ratio(summary.ours.seq.cpu_ms_per_thread, summary.peer.seq.cpu_ms_per_thread),
      ratio_cpu_per_thread_c10: ratio(summary.ours.c10.cpu_ms_per_thread, summary.peer.c10.cpu_ms_per_thread),
      // The same ratio of the server processes alone (each side's database backends left out).
      ratio_server_cpu_per_thread_c10: ratio(
        summary.ours.c10.server_cpu_ms_per_thread,
        summary.peer.c10.server_cpu_ms_per_thread,
      ),
      ratio_rss: ratio(summary.ours.rss_mb, summary.peer.rss_mb),
    };
    for (const [k, v] of Object.entries(ratios)) console.log(`  ${k.padEnd(34)} ${v}`);
    // What a ratio of 1.2 leaves for durability: were our server exactly as dear as the peer's, our database could
    // spend this much a ticket (the peer's database next to nothing: it keeps its state in memory).
    const peerC10 = summary.peer.c10;
    const room = 1.2 * peerC10.cpu_ms_per_thread - peerC10.server_cpu_ms_per_thread;
    console.log(
      `at c${CONCURRENCY}, 1.2× the peer's ${peerC10.cpu_ms_per_thread} ms leaves ${round(room, 1)} ms a ticket for our ` +
        `database with our server as dear as the peer's (${peerC10.server_cpu_ms_per_thread} ms); ours spent ` +
        `${summary.ours.c10.database_cpu_ms_per_thread} ms there and ${summary.ours.c10.server_cpu_ms_per_thread} ms ` +
        `in the server`,
    );
    if (errors > 0) exitCode = 1;
    console.log(
      JSON.stringify({
        bench: "peer",
        peer: PEER_PACKAGE,
        peer_kind: peerKind,
        rounds: ROUNDS,
        threads_per_phase: THREADS,
        concurrency: CONCURRENCY,
        ...ratios,
        ...pairs,
        ...idleProbeJson,
        errors,
        ...overhead,
        ours_claim_to_first_event_ms: claimToFirstEvent,
        ours: summary.ours,
        peer_server: summary.peer,
      }),
    );
  }
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await Promise.all(sides.map((s) => s.stop()));
  await admin.end();
  for (const d of databases) {
    await d.sql.end();
    await d.drop();
  }
}
process.exit(exitCode || process.exitCode || 0);
