import { writeFileSync } from "node:fs";
import pg from "pg";
import type { PendingInterruptView } from "@/lib/runtime/views/thread-view";
import { pausedTicket, postRun, runBody } from "../api/client";
import { prepareDatabase } from "../api/setup";
import { answerFor, driveThread, type StreamReport, type Target } from "../chaos/driver";
import { countProviderDeliveries, type EffectCounts, waitForEffectsToSettle } from "../chaos/effects";
import { ticketOf, verifyRunOutcomes } from "../chaos/harness";
import { authedFetch, type Who } from "../support/auth";
import { startFailoverCluster } from "../support/failover-cluster";
import { startFakePaymentProvider } from "../support/fake-payment";
import { ADMIN_URL } from "../support/pg";
import { type Pooler, pooledUrl, startPooler } from "../support/pooler";
import { startTestServer, type TestServer } from "../support/server";
import { startTestSmtpServer } from "../support/smtp";

/*
 * Faults below the app, under load (`npm run test:failover`, and a shorter run in `npm test`): refund tickets are
 * driven to the end by patient operators — runs executing, approvals arriving, streams open, refunds and emails
 * delivered — while the database fails over to its synchronous standby, the pooler restarts, or the connections run
 * out. What must hold is counted where it cannot be faked: every response the operators got (never a 5xx but a 503
 * with an `unavailable:*` code, never an answer slower than the wait limits), every decision answered 200 resolved in
 * the ledger afterwards, every refund and email counted at the payment provider and the SMTP server, every event log
 * whole and valid AG-UI, every stream ended with its run's terminal event (directly, or after a reconnect by seq), and
 * the audit chain verifying.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The wait limits the servers run with: no answer may take longer than these allow. */
export const DATABASE_WAIT_MS = 3_000;
export const STATEMENT_TIMEOUT_MS = 2_000;

/** Every answer the operators got, as the failover run counts them. */
export class Traffic {
  readonly statuses = new Map<number, number>();
  /** 503 codes seen (`unavailable:*`), by code. */
  readonly unavailable = new Map<string, number>();
  /** Any other 5xx, or a request that got no answer at all: each one a broken promise. */
  readonly broken: string[] = [];
  /** The slowest time to an answer's head (a stream's head comes at once; its body may go on for long). */
  slowestMs = 0;
  /** Interrupt ids whose answer the server accepted (200): each must be resolved in the ledger at the end. */
  readonly accepted = new Set<string>();
  readonly streams: StreamReport[] = [];
  /** 4xx answers by status and code (a resume refused as already answered is expected after a cut stream). */
  readonly refusals = new Map<string, number>();
  readonly firstRefusals: string[] = [];

  constructor(private readonly answerWithinMs: number) {}

  readonly fetch = async (url: string, init: RequestInit = {}, who?: Who): Promise<Response> => {
    const started = performance.now();
    const abort = new AbortController();
    // A request that hangs would hang its operator: give up after the limit, and count it.
    const timer = setTimeout(() => abort.abort(), this.answerWithinMs);
    let res: Response;
    try {
      res = await authedFetch(url, { ...init, signal: abort.signal }, who);
    } catch (error) {
      this.broken.push(`${init.method ?? "GET"} ${new URL(url).pathname}: no answer (${String(error)})`);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    const ms = performance.now() - started;
    this.slowestMs = Math.max(this.slowestMs, ms);
    this.statuses.set(res.status, (this.statuses.get(res.status) ?? 0) + 1);
    if (res.status === 307 && res.headers.get("location")?.startsWith("/unavailable")) {
      this.unavailable.set(
        "page → /unavailable (503)",
        (this.unavailable.get("page → /unavailable (503)") ?? 0) + 1,
      );
    }
    if (res.status >= 400 && res.status < 500) {
      const body = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { code?: string; message?: string };
      const key = `${res.status} ${body.code ?? ""}`;
      this.refusals.set(key, (this.refusals.get(key) ?? 0) + 1);
      if (this.refusals.get(key) === 1)
        this.firstRefusals.push(`${new URL(url).pathname}: ${key} ${body.message}`);
    }
    if (res.status >= 500) {
      const body = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { code?: string };
      if (res.status === 503 && body.code?.startsWith("unavailable:")) {
        this.unavailable.set(body.code, (this.unavailable.get(body.code) ?? 0) + 1);
      } else {
        this.broken.push(
          `${init.method ?? "GET"} ${new URL(url).pathname}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`,
        );
      }
    }
    if (res.status === 200 && init.method === "POST" && typeof init.body === "string") {
      const sent = JSON.parse(init.body) as { resume?: { interruptId: string }[] };
      for (const answer of sent.resume ?? []) this.accepted.add(answer.interruptId);
    }
    return res;
  };

  codes(): Record<string, number> {
    return Object.fromEntries(this.unavailable);
  }
}

export interface LoadSummary extends EffectCounts {
  scenario: string;
  threads: number;
  completed: number;
  failed_runs: number;
  recovered_runs: number;
  double_refunds: number;
  missing_refunds: number;
  lost_events: number;
  invalid_event_logs: number;
  /** Responses by status, and the 503 codes among them. */
  statuses: Record<string, number>;
  unavailable_codes: Record<string, number>;
  /** 4xx answers by status and code. */
  refusals: Record<string, number>;
  /** 5xx other than a 503 `unavailable:*`, and requests with no answer within the limit. */
  broken_responses: number;
  broken_examples: string[];
  slowest_answer_ms: number;
  /** Decisions the server answered 200 that the ledger does not hold as resolved. */
  answered_decisions: number;
  lost_decisions: number;
  /** Run streams: ended with their terminal event; cut without one; of those, resumed by seq to the end. */
  streams: number;
  streams_cut: number;
  streams_resumed: number;
  /** Seq gaps inside one stream (an event skipped while it was open). */
  stream_gaps: number;
  /** Rows `audit_log_verify()` reports (0: the chain holds). */
  audit_problems: number;
  failures: string[];
  seconds: number;
}

/** What a scenario gets while its load runs. */
export interface LoadContext {
  server: TestServer;
  databaseUrl: string;
  traffic: Traffic;
  log: (line: string) => void;
  /** Milliseconds until /api/health answers 200 again (the database and every background task reachable). */
  untilHealthy(timeoutMs?: number): Promise<number>;
  /** Wait until some tickets are moving (a run executing, a refund under way). */
  busy(): Promise<void>;
  /** /api/health now: its status and what its body says. */
  health(): Promise<{ status: number; code?: string; reason?: string }>;
  /** The `n` threads created last. */
  recentThreads(n: number): string[];
}

/**
 * Serve refund tickets from `threads` concurrent operators on a fresh database (made at `adminUrl`) through one
 * server, while `faults` does its damage; then stop taking new tickets, let every one finish, and count.
 */
export async function underLoad(options: {
  scenario: string;
  threads: number;
  adminUrl?: string;
  /** The server's database settings for the database at `url` (default: DATABASE_URL = url). */
  serverEnv?: (url: string) => Record<string, string>;
  log?: (line: string) => void;
  /** How long a ticket may take before the run counts as stuck (default 5 min). */
  deadlineMs?: number;
  faults: (ctx: LoadContext) => Promise<void>;
}): Promise<LoadSummary> {
  const log = options.log ?? (() => {});
  const started = Date.now();
  const prepared = await prepareDatabase("faults", { prefix: "ORD-9", count: 1000 }, options.adminUrl);
  const provider = await startFakePaymentProvider();
  const smtp = await startTestSmtpServer();
  const traffic = new Traffic(DATABASE_WAIT_MS * 2 + STATEMENT_TIMEOUT_MS + 5_000);
  let server: TestServer | undefined;
  try {
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: {
        ...(options.serverEnv ? options.serverEnv(prepared.url) : {}),
        DATABASE_WAIT_MS: String(DATABASE_WAIT_MS),
        DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        RUN_LEASE_MS: "3000",
        RUN_SWEEP_INTERVAL_MS: "300",
        OFFLINE_TOKEN_DELAY_MS: "10",
        CHAOS_REFUND_DELAY_MS: "100",
        PAYMENT_URL: provider.url,
        PAYMENT_TIMEOUT_MS: "2000",
        SMTP_URL: smtp.url,
        EFFECT_POLL_MS: "100",
        EFFECT_RETRY_BASE_MS: "100",
        EFFECT_RETRY_MAX_MS: "1000",
        EFFECT_MAX_ATTEMPTS: "40",
        // Half of it is how long recording an outcome rides out the outage (lib/delivery/engine.ts).
        EFFECT_LEASE_MS: "10000",
        DEADLINE_SWEEP_MS: "500",
        AUDIT_CHAIN_MS: "300",
      },
    });
    const up = server;
    const target: Target = {
      url: up.url,
      up: () => Promise.resolve(),
      fetch: traffic.fetch,
      streamEnded: (report) => traffic.streams.push(report),
    };
    let issued = 0;
    let stopIssuing = false;
    const created: string[] = [];
    const outcomes: string[] = [];
    let steps = 0;
    const deadline = Date.now() + (options.deadlineMs ?? 150_000);
    const newTicket = async () => {
      const { orderId, message } = ticketOf(issued++);
      for (;;) {
        const res = await traffic
          .fetch(
            `${up.url}/api/threads`,
            {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ message }),
            },
            "intake",
          )
          .catch(() => null);
        if (res?.status === 201) {
          const { threadId } = (await res.json()) as { threadId: string };
          created.push(threadId);
          return { threadId, message, orderId };
        }
        // Refused during the fault (counted by the traffic): the intake tries again.
        await res?.text();
        await sleep(200);
      }
    };
    const worker = async () => {
      do {
        outcomes.push(
          await driveThread(
            target,
            await newTicket(),
            (e) => {
              if (e.type === "STEP_FINISHED") steps += 1;
            },
            deadline,
          ),
        );
      } while (!stopIssuing && issued < 1000);
    };
    const drivers = Promise.all(Array.from({ length: options.threads }, worker));
    // A viewer reloading the inbox and a thread page meanwhile: a page must never answer 5xx either (a database fault
    // sends it to /unavailable, a 503 that comes back by itself).
    const viewer = (async () => {
      let thread: string | null = null;
      while (!stopIssuing) {
        for (const path of ["/", ...(thread ? [`/threads/${thread}`] : [])]) {
          const res = await traffic
            .fetch(`${up.url}${path}`, { redirect: "manual" }, "viewer")
            .catch(() => null);
          await res?.arrayBuffer();
        }
        thread ??= traffic.streams[0]?.threadId ?? null;
        await sleep(250);
      }
    })();
    const ctx: LoadContext = {
      server: up,
      databaseUrl: prepared.url,
      traffic,
      log,
      async untilHealthy(timeoutMs = 60_000) {
        const from = performance.now();
        for (;;) {
          const res = await fetch(`${up.url}/api/health`).catch(() => null);
          if (res?.status === 200) return Math.round(performance.now() - from);
          if (performance.now() - from > timeoutMs) {
            throw new Error(
              `not healthy after ${timeoutMs} ms: ${await res?.text()}\n${up.log().slice(-3000)}`,
            );
          }
          await sleep(50);
        }
      },
      async health() {
        const res = await fetch(`${up.url}/api/health`);
        const body = (await res.json().catch(() => ({}))) as { code?: string; reason?: string };
        return {
          status: res.status,
          ...(body.code ? { code: body.code } : {}),
          ...(body.reason ? { reason: body.reason } : {}),
        };
      },
      recentThreads: (n) => created.slice(-n),
      async busy() {
        const before = steps;
        const until = Date.now() + 10_000;
        while (steps < before + options.threads && Date.now() < until) await sleep(50);
      },
    };
    try {
      await options.faults(ctx);
    } finally {
      stopIssuing = true;
    }
    await drivers;
    await viewer;
    await waitForEffectsToSettle(prepared.sql, 120_000);
    const effects = await countProviderDeliveries(
      prepared.sql,
      provider.created.map((c) => c.orderId),
      smtp,
    );
    const outcome = await verifyRunOutcomes(prepared, { kills: 0, threads: issued }, outcomes, started);
    const resolved = new Set(
      (
        await prepared.sql.rows<{ interrupt_id: string }>(
          "SELECT interrupt_id FROM decisions WHERE status = 'resolved' AND interrupt_id = ANY($1)",
          [[...traffic.accepted]],
        )
      ).map((r) => r.interrupt_id),
    );
    const streams = await checkStreams(up.url, traffic.streams);
    const audit = await prepared.sql.rows("SELECT * FROM audit_log_verify()");
    return {
      scenario: options.scenario,
      threads: issued,
      completed: outcome.completed,
      failed_runs: outcome.failed_runs,
      recovered_runs: outcome.recovered_runs,
      double_refunds: outcome.double_refunds,
      missing_refunds: outcome.missing_refunds,
      lost_events: outcome.lost_events,
      invalid_event_logs: outcome.invalid_event_logs,
      ...effects,
      statuses: Object.fromEntries([...traffic.statuses].map(([k, v]) => [String(k), v])),
      refusals: Object.fromEntries(traffic.refusals),
      unavailable_codes: traffic.codes(),
      broken_responses: traffic.broken.length,
      broken_examples: traffic.broken.slice(0, 5),
      slowest_answer_ms: Math.round(traffic.slowestMs),
      answered_decisions: traffic.accepted.size,
      lost_decisions: [...traffic.accepted].filter((id) => !resolved.has(id)).length,
      ...streams,
      audit_problems: audit.length,
      failures: outcome.failures,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
  } catch (error) {
    console.error(
      `refusals: ${JSON.stringify(Object.fromEntries(traffic.refusals))}\n${traffic.firstRefusals.join("\n")}`,
    );
    if (server) {
      // The whole log to a file for a post-mortem (FAILOVER_LOG), its tail here.
      const file = process.env.FAILOVER_LOG;
      if (file) writeFileSync(file, server.log());
      console.error(`server log (tail):\n${server.log().slice(-6000)}`);
    }
    throw error;
  } finally {
    await server?.stop();
    // FAILOVER_LOG=<prefix>: each scenario's whole server log, for a post-mortem.
    if (process.env.FAILOVER_LOG && server) {
      writeFileSync(`${process.env.FAILOVER_LOG}.${options.scenario.replace(/\W+/g, "-")}.log`, server.log());
    }
    await provider.close();
    await smtp.close();
    await prepared.sql.end();
    // FAILOVER_KEEP=1 keeps the database (and its cluster) for a post-mortem.
    if (process.env.FAILOVER_KEEP) console.error(`failover: database kept at ${prepared.url}`);
    else await prepared.drop().catch(() => {});
  }
}

/**
 * Every run stream the operators read: seqs contiguous while it was open, and ended by its run's terminal event — or,
 * cut without one (or ended with a retryable `unavailable:*`), resumed by seq from where it stopped until the thread's
 * log has nothing more, ending with a terminal event.
 */
async function checkStreams(
  baseUrl: string,
  reports: StreamReport[],
): Promise<{ streams: number; streams_cut: number; streams_resumed: number; stream_gaps: number }> {
  let cut = 0;
  let resumed = 0;
  let gaps = 0;
  for (const report of reports) {
    for (let i = 1; i < report.seqs.length; i += 1) {
      if (report.seqs[i] !== (report.seqs[i - 1] as number) + 1) gaps += 1;
    }
    const ended = report.terminal !== null && !report.code?.startsWith("unavailable:");
    if (ended) continue;
    cut += 1;
    const after = report.seqs.at(-1) ?? 0;
    const res = await authedFetch(`${baseUrl}/api/threads/${report.threadId}/events?after=${after}`, {
      headers: { accept: "text/event-stream" },
    });
    const text = await res.text();
    const seqs = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    const types = [...text.matchAll(/"type":"([A-Z_]+)"/g)].map((m) => m[1]);
    if (seqs[0] === after + 1 && (types.includes("RUN_FINISHED") || types.includes("RUN_ERROR")))
      resumed += 1;
  }
  return { streams: reports.length, streams_cut: cut, streams_resumed: resumed, stream_gaps: gaps };
}

/** What every scenario must show: nothing lost, nothing twice, no 5xx but coded 503s, every stream whole. */
export function invariantsHold(s: LoadSummary): string[] {
  const broken: string[] = [];
  const must = (ok: boolean, what: string) => {
    if (!ok) broken.push(what);
  };
  must(s.completed === s.threads, `${s.threads - s.completed} tickets did not complete`);
  must(s.failed_runs === 0, `${s.failed_runs} runs failed or never ended`);
  must(s.lost_decisions === 0, `${s.lost_decisions} decisions answered 200 are not in the ledger`);
  must(s.double_refunds === 0 && s.duplicates_at_provider === 0, "an effect was delivered twice");
  must(s.missing_refunds === 0 && s.missing_refunds_at_provider === 0, "a refund is missing at the provider");
  must(s.missing_unflagged === 0, "an email is missing without an operator task saying so");
  must(
    s.unconfirmed_effects === 0,
    `${s.unconfirmed_effects} effects delivered during the fault were left unconfirmed (operator tasks for nothing)`,
  );
  must(s.unauthorized_at_provider === 0, "a delivery nobody authorized");
  must(s.lost_events === 0 && s.invalid_event_logs === 0, "an event log has a hole or is not valid AG-UI");
  must(s.broken_responses === 0, `${s.broken_responses} responses were 5xx without a code, or never came`);
  must(s.streams_cut === s.streams_resumed, `${s.streams_cut - s.streams_resumed} streams did not resume`);
  must(s.stream_gaps === 0, `${s.stream_gaps} gaps inside open streams`);
  must(s.audit_problems === 0, "the audit chain does not verify");
  return broken;
}

/**
 * A browser tab following a thread's events (`GET /events`) that loses its connection when the database dies
 * (`cut`) and comes back after the promotion (`resume`) with the last seq it saw: what it got over both connections
 * must be the thread's log without a gap or a repeat.
 */
function followAcross(
  baseUrl: string,
  threadId: string,
): { cut(): void; resume(): void; done: Promise<{ seqs: number[]; whole: boolean }> } {
  const seqs: number[] = [];
  let abort = new AbortController();
  let resumed: () => void = () => {};
  const resumeNow = new Promise<void>((r) => {
    resumed = r;
  });
  const read = async (after: number) => {
    const res = await authedFetch(`${baseUrl}/api/threads/${threadId}/events?after=${after}`, {
      headers: { accept: "text/event-stream" },
      signal: abort.signal,
    });
    if (res.status !== 200 || !res.body) {
      await res.text();
      return;
    }
    const decoder = new TextDecoder();
    let buffer = "";
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        // Whole lines only: a chunk may end in the middle of one.
        const end = buffer.lastIndexOf("\n") + 1;
        for (const m of buffer.slice(0, end).matchAll(/^id: (\d+)$/gm)) seqs.push(Number(m[1]));
        buffer = buffer.slice(end);
      }
    } catch {
      // cut
    }
  };
  const done = (async () => {
    await read(0).catch(() => {});
    await resumeNow;
    abort = new AbortController();
    const stop = setTimeout(() => abort.abort(), 20_000);
    await read(seqs.at(-1) ?? 0).catch(() => {});
    clearTimeout(stop);
    const whole = seqs.length > 0 && seqs.every((seq, i) => seq === i + 1);
    return { seqs, whole };
  })();
  return {
    cut: () => abort.abort(),
    resume: () => resumed(),
    done,
  };
}

/** Failover: the primary is stopped hard under load and the standby promoted, `times` times. */
export async function failoverUnderLoad(options: {
  times: number;
  threads: number;
  log?: (line: string) => void;
}): Promise<
  LoadSummary & {
    recovery_ms: number[];
    promote_ms: number[];
    health_during: unknown;
    reconnected_tabs: number;
    reconnected_tabs_whole: number;
  }
> {
  const cluster = await startFailoverCluster({ maxConnections: 80 });
  const recovery: number[] = [];
  const promoted: number[] = [];
  let health: unknown = null;
  let reconnects = 0;
  let reconnectsWhole = 0;
  try {
    const summary = await underLoad({
      scenario: "failover",
      threads: options.threads,
      adminUrl: cluster.url("postgres"),
      ...(options.log ? { log: options.log } : {}),
      faults: async (ctx) => {
        await ctx.untilHealthy();
        for (let i = 0; i < options.times; i += 1) {
          await ctx.busy();
          // Two tabs follow the newest threads; their connections drop with the primary, and come back after.
          const tabs = ctx.recentThreads(2).map((threadId) => followAcross(ctx.server.url, threadId));
          await sleep(200);
          await cluster.killPrimary();
          for (const tab of tabs) tab.cut();
          // A managed database takes seconds to notice and promote: requests meet the outage meanwhile.
          await sleep(1_000);
          if (i === 0) {
            health = await ctx.health();
            ctx.log(`failover: health during the outage says ${JSON.stringify(health)}`);
          }
          await sleep(500);
          promoted.push(await cluster.promote());
          const ms = await ctx.untilHealthy();
          recovery.push(ms);
          for (const tab of tabs) tab.resume();
          for (const followed of await Promise.all(tabs.map((tab) => tab.done))) {
            reconnects += 1;
            if (followed.whole) reconnectsWhole += 1;
          }
          ctx.log(
            `failover ${i + 1}/${options.times}: promoted in ${promoted.at(-1)} ms, full service ${ms} ms after`,
          );
          if (i + 1 < options.times) await cluster.rebuildStandby();
        }
        await ctx.busy();
      },
    });
    return {
      ...summary,
      recovery_ms: recovery,
      promote_ms: promoted,
      health_during: health,
      // Tabs whose connection dropped with the primary and came back by seq: whole logs, no gap, no repeat.
      reconnected_tabs: reconnects,
      reconnected_tabs_whole: reconnectsWhole,
    };
  } catch (error) {
    console.error(cluster.logs());
    throw error;
  } finally {
    if (process.env.FAILOVER_KEEP) console.error(`failover: cluster kept, primary ${cluster.primaryUrl()}`);
    else await cluster.stop();
  }
}

/**
 * Connections run out: another client takes every free slot of the database server, and the server's own
 * connections are cut (as a restart of its pods would), so it must open new ones while none is left — for `holdMs`.
 */
export async function exhaustionUnderLoad(options: {
  threads: number;
  holdMs?: number;
  log?: (line: string) => void;
}): Promise<LoadSummary & { held_connections: number; recovery_ms: number; health_during: unknown }> {
  const cluster = await startFailoverCluster({ maxConnections: 60 });
  const hogs: pg.Client[] = [];
  let recovery = 0;
  let health: unknown = null;
  try {
    const summary = await underLoad({
      scenario: "exhaustion",
      threads: options.threads,
      adminUrl: cluster.url("postgres"),
      ...(options.log ? { log: options.log } : {}),
      faults: async (ctx) => {
        await ctx.untilHealthy();
        await ctx.busy();
        const admin = new pg.Client({ connectionString: cluster.primaryUrl("postgres") });
        await admin.connect();
        const dbName = new URL(ctx.databaseUrl).pathname.slice(1);
        // Cut the server's connections and take every slot left (the superuser reserve too: the server connects as a
        // superuser here), three times over: what the server reopened in between is cut and taken again.
        for (let round = 0; round < 3; round += 1) {
          await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            [dbName],
          );
          for (;;) {
            const hog = new pg.Client({ connectionString: cluster.primaryUrl("postgres") });
            hog.on("error", () => {});
            try {
              await hog.connect();
              hogs.push(hog);
            } catch {
              break;
            }
          }
        }
        ctx.log(`exhaustion: ${hogs.length} connections held by another client, the server's cut`);
        await sleep(Math.min(1_000, options.holdMs ?? 3_000));
        health = await ctx.health();
        ctx.log(`exhaustion: health says ${JSON.stringify(health)}`);
        await sleep(Math.max(0, (options.holdMs ?? 3_000) - 1_000));
        await Promise.all(hogs.map((h) => h.end().catch(() => {})));
        await admin.end();
        recovery = await ctx.untilHealthy();
        ctx.log(`exhaustion: released; full service ${recovery} ms after`);
        await ctx.busy();
      },
    });
    return { ...summary, held_connections: hogs.length, recovery_ms: recovery, health_during: health };
  } catch (error) {
    console.error(cluster.logs());
    throw error;
  } finally {
    await Promise.all(hogs.map((h) => h.end().catch(() => {})));
    await cluster.stop();
  }
}

/** The pooler restarts: PgBouncer (transaction mode, in front of the test Postgres) killed and started, `times` times. */
export async function poolerRestartUnderLoad(options: {
  times: number;
  threads: number;
  log?: (line: string) => void;
}): Promise<LoadSummary & { recovery_ms: number[] }> {
  const pooler: Pooler = await startPooler();
  const recovery: number[] = [];
  try {
    const summary = await underLoad({
      scenario: "pooler restart",
      threads: options.threads,
      adminUrl: ADMIN_URL,
      serverEnv: (url) => ({
        DATABASE_URL: pooledUrl(url, pooler.port),
        DATABASE_LISTEN_URL: url,
        DATABASE_POOLER: "transaction",
      }),
      ...(options.log ? { log: options.log } : {}),
      faults: async (ctx) => {
        await ctx.untilHealthy();
        for (let i = 0; i < options.times; i += 1) {
          await ctx.busy();
          await pooler.restart();
          const ms = await ctx.untilHealthy();
          recovery.push(ms);
          ctx.log(`pooler restart ${i + 1}/${options.times}: full service ${ms} ms after`);
        }
        await ctx.busy();
      },
    });
    return { ...summary, recovery_ms: recovery };
  } finally {
    await pooler.stop();
  }
}

/** What the locked-row case must show: the locked thread's answer refused with a code, the rest served, then taken. */
export function lockedRowHolds(lock: LockedRowSummary): string[] {
  const broken: string[] = [];
  if (Object.keys(lock.locked_answers).some((a) => a !== "503 unavailable:database_busy"))
    broken.push(`the locked thread's answer: ${JSON.stringify(lock.locked_answers)}`);
  if (lock.locked_slowest_ms > STATEMENT_TIMEOUT_MS + DATABASE_WAIT_MS)
    broken.push(`the locked thread's answer took ${lock.locked_slowest_ms} ms`);
  if (lock.unrelated_not_ok > 0) broken.push(`${lock.unrelated_not_ok} unrelated reads failed`);
  if (lock.answered_after !== 1) broken.push("the answer was not taken once the lock was gone");
  return broken;
}

/** p50 and p99 of `ms`, rounded to 0.1 ms. */
function percentiles(ms: number[]): { p50: number; p99: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: Math.round(at(0.5) * 10) / 10, p99: Math.round(at(0.99) * 10) / 10 };
}

export interface LockedRowSummary {
  /** Requests that need the locked thread: how they were answered, and the slowest. */
  locked_requests: number;
  locked_answers: Record<string, number>;
  locked_slowest_ms: number;
  /** Unrelated reads (another thread's state, the inbox) before and while the lock is held. */
  unrelated_requests: number;
  unrelated_not_ok: number;
  unrelated_before: { p50: number; p99: number };
  unrelated_during: { p50: number; p99: number };
  /** After the lock is gone, the same answer is taken. */
  answered_after: number;
}

/**
 * A row lock that never returns: an outside session locks one paused thread's row (`SELECT … FOR UPDATE`, left
 * open). Answering that thread's decision needs the row: it must end within the statement limit with a code, while
 * the rest of the console answers as fast as before. Then the lock goes and the same answer is taken.
 */
export async function lockedRow(options: {
  samples?: number;
  log?: (line: string) => void;
}): Promise<LockedRowSummary> {
  const log = options.log ?? (() => {});
  const samples = options.samples ?? 60;
  const prepared = await prepareDatabase("lock", { prefix: "ORD-9", count: 10 });
  let server: TestServer | undefined;
  const holder = new pg.Client({ connectionString: prepared.url });
  try {
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: {
        DATABASE_WAIT_MS: String(DATABASE_WAIT_MS),
        DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      },
    });
    const url = server.url;
    const locked = await pausedTicket(url, "ORD-9001");
    const other = await pausedTicket(url, "ORD-9002");
    // Whatever the agent asked first, answered as an operator would.
    const view = (await (await authedFetch(`${url}/api/threads/${locked.threadId}`)).json()) as {
      pendingInterrupts: PendingInterruptView[];
    };
    const pending = view.pendingInterrupts[0];
    if (!pending) throw new Error("locked row: the ticket asked nothing");
    const answer = {
      interruptId: pending.interruptId,
      status: "resolved",
      payload: answerFor(pending, "ORD-9001"),
    };
    // Another thread's state, the thread list, and the inbox page itself.
    const unrelated = [`/api/threads/${other.threadId}`, "/api/threads", "/"];
    const timeReads = async () => {
      const ms: number[] = [];
      let notOk = 0;
      for (let i = 0; i < samples; i += 1) {
        const started = performance.now();
        const res = await authedFetch(`${url}${unrelated[i % unrelated.length]}`);
        await res.arrayBuffer();
        ms.push(performance.now() - started);
        if (res.status !== 200) notOk += 1;
      }
      return { ms, notOk };
    };
    await timeReads(); // warm
    const before = await timeReads();
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT * FROM threads WHERE id = $1 FOR UPDATE", [locked.threadId]);
    log(`locked row: thread ${locked.threadId} locked by an outside session`);
    const answers = new Map<string, number>();
    let slowest = 0;
    const tries = 3;
    const during = { ms: [] as number[], notOk: 0 };
    // The locked thread's answer, tried while unrelated reads go on beside it.
    const lockedTries = (async () => {
      for (let i = 0; i < tries; i += 1) {
        const started = performance.now();
        const res = await postRun(url, locked.threadId, runBody(locked.threadId, [answer]));
        slowest = Math.max(slowest, performance.now() - started);
        const key = `${res.status} ${(res.json?.code as string | undefined) ?? ""}`.trim();
        answers.set(key, (answers.get(key) ?? 0) + 1);
      }
    })();
    while (during.ms.length < samples * 2) {
      const r = await timeReads();
      during.ms.push(...r.ms);
      during.notOk += r.notOk;
    }
    await lockedTries;
    await holder.query("ROLLBACK");
    const after = await postRun(url, locked.threadId, runBody(locked.threadId, [answer]));
    log(`locked row: released; the answer is taken (${after.status})`);
    return {
      locked_requests: tries,
      locked_answers: Object.fromEntries(answers),
      locked_slowest_ms: Math.round(slowest),
      unrelated_requests: before.ms.length + during.ms.length,
      unrelated_not_ok: before.notOk + during.notOk,
      unrelated_before: percentiles(before.ms),
      unrelated_during: percentiles(during.ms),
      answered_after: after.status === 200 && /RUN_(FINISHED|ERROR)/.test(after.text) ? 1 : 0,
    };
  } finally {
    await holder.end().catch(() => {});
    await server?.stop();
    await prepared.sql.end();
    await prepared.drop().catch(() => {});
  }
}
