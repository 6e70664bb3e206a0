import fc from "fast-check";
import { ADMIN_EMAIL, authedFetch, authHeaders, signIn, TEST_PASSWORD } from "../support/auth";
import type { Sender } from "../support/hostile";
import type { TestServer } from "../support/server";
import { createTicket, pausedTicket, postRun } from "./client";
import { describeRequest, HANG_MS, type Outcome, send } from "./fuzz-send";
import { type FuzzContext, type HostileRequest, TARGETS } from "./fuzz-targets";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/*
 * Property-based fuzzing of every API route and method (issue 9): FUZZ_RUNS (default 1000) generated hostile requests
 * per route-method, seeded (FUZZ_SEED), against one `next start` on a fresh database. Three properties: no response
 * is ≥ 500, none takes over 5 s, and no refused (4xx) request changes the row counts of any table, the decisions
 * ledger or who may do what. Requests go in batches of eight; the database is compared around each batch, and a
 * batch that changed it is replayed one request at a time to name the culprit.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_901);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const BATCH = 8;

interface Failure {
  kind: "status >= 500" | "hang" | "unrefused write";
  request: string;
  status: number;
  response: string;
  serverLog?: string;
}

/** Requests that declared more body than they sent and got no answer (the server waited for the rest). */
const stalled: string[] = [];
const totals = { requests: 0, replayed: 0, errors500: 0, hangs: 0, writes: 0, clientErrors: 0, accepted: 0 };

describe("hostile requests to every route", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  let server: TestServer | undefined;
  let ctx: FuzzContext;
  let snapshotSql = "";
  let cookieName = "";
  let victimCookie = "";
  const started = performance.now();

  const pause = (order: string) => pausedTicket(server!.url, order);

  beforeAll(async () => {
    console.log(`fuzz: seed ${SEED} (FUZZ_SEED), ${RUNS} requests per route-method (FUZZ_RUNS)`);
    prepared = await prepareDatabase("fuzz", { prefix: "ORD-7", count: 20 });
    // Claims taken by accepted requests must not expire mid-run, and the operations page's queue sampler must not
    // write its minute's sample: either would change the snapshot between two batches of refusals.
    server = await startTestServer({
      databaseUrl: prepared.url,
      env: { CLAIM_TTL_MS: "3600000", OPS_SAMPLE_INTERVAL_MS: "3600000" },
    });
    const base = server.url;
    const paused = await Promise.all(["ORD-7000", "ORD-7001", "ORD-7002", "ORD-7003"].map(pause));
    const done = paused.pop()!;
    const approve = { interruptId: done.interruptId, status: "resolved", payload: { decision: "approve" } };
    const finished = await postRun(base, done.threadId, {
      threadId: done.threadId,
      runId: crypto.randomUUID(),
      messages: [],
      tools: [],
      context: [],
      resume: [approve],
    });
    expect(finished.status).toBe(200);
    const idle = await createTicket(base, "Refund ORD-7004 please, it broke.");

    const admin = (path: string, body: unknown) =>
      authedFetch(
        `${base}${path}`,
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
        "admin",
      );
    for (let i = 0; i < 3; i++) {
      const user = {
        email: `fuzz-victim-${i}@test.local`,
        name: "Victim",
        password: TEST_PASSWORD,
        role: "viewer",
      };
      expect((await admin("/api/admin/users", user)).status).toBe(201);
      expect((await admin("/api/admin/keys", { name: `fuzz-victim-${i}` })).status).toBe(201);
    }
    victimCookie = await signIn(base, "fuzz-victim-0@test.local");
    cookieName = ((await authHeaders(base, "viewer")).cookie ?? "").split("=", 1)[0]!;

    const sql = prepared.sql;
    const ids = async (text: string) => (await sql.rows<{ v: string }>(text)).map((r) => r.v);
    const cursors: string[] = [];
    for (const q of ["limit=1", "status=all&limit=1", "status=completed&limit=1"]) {
      const page = await (await authedFetch(`${base}/api/threads?${q}`, {}, "viewer")).json();
      if (page.nextCursor) cursors.push(page.nextCursor);
    }
    ctx = {
      origin: base,
      threadIds: [...paused.map((p) => p.threadId), done.threadId, idle],
      checkpoints: (
        await sql.rows<{ t: string; c: string }>(
          "SELECT thread_id AS t, checkpoint_id AS c FROM checkpoint.checkpoints WHERE checkpoint_ns = '' ORDER BY created_at",
        )
      ).map((r) => [r.t, r.c] as [string, string]),
      interruptIds: await ids("SELECT interrupt_id AS v FROM decisions"),
      effectIds: await ids("SELECT id AS v FROM effects"),
      victimUserIds: await ids("SELECT id AS v FROM auth_users WHERE email LIKE 'fuzz-victim-%'"),
      victimKeyIds: await ids("SELECT id AS v FROM api_keys WHERE name LIKE 'fuzz-victim-%'"),
      victimEmail: "fuzz-victim-1@test.local",
      inboxCursors: cursors.length ? cursors : ["e30"],
      auditIds: (await ids("SELECT id::text AS v FROM audit_log")).map(Number),
    };

    // Every table of the app's schema and the saver's, counted; the rate-limit table is written by refused sign-ins by design,
    // and failed sign-ins may be audited. The audit chain is the chainer's, linking audit rows after their commit in
    // the background (its rows follow audit_log's, which is counted), and a stream of another instance's run says it
    // follows the thread while it is open (thread_followers). Fingerprints: the ledger's statuses, roles and disabled
    // flags, revocations.
    const tables = await ids(
      "SELECT CASE table_schema WHEN 'public' THEN table_name ELSE table_schema || '.' || table_name END AS v FROM information_schema.tables WHERE table_schema IN ('public', 'checkpoint') AND table_type = 'BASE TABLE' ORDER BY 1",
    );
    const parts = tables
      .filter(
        (t) => !["auth_rate_limits", "audit_chain", "audit_chain_state", "thread_followers"].includes(t),
      )
      .map((t) =>
        t === "audit_log"
          ? `'audit_log', (SELECT count(*) FROM audit_log WHERE action::text <> 'sign_in_failed')`
          : `'${t}', (SELECT count(*) FROM ${t
              .split(".")
              .map((part) => `"${part}"`)
              .join(".")})`,
      );
    parts.push(
      `'decisions:status', (SELECT md5(coalesce(string_agg(interrupt_id || ':' || status, ',' ORDER BY interrupt_id), '')) FROM decisions)`,
      `'auth_users:access', (SELECT md5(coalesce(string_agg(id || ':' || role || ':' || disabled, ',' ORDER BY id), '')) FROM auth_users)`,
      `'api_keys:revoked', (SELECT md5(coalesce(string_agg(id || ':' || (revoked_at IS NULL), ',' ORDER BY id), '')) FROM api_keys)`,
    );
    snapshotSql = `SELECT json_build_object(${parts.join(", ")}) AS s`;
  }, 180_000);

  afterAll(async () => {
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    console.log(
      `fuzz: ${totals.requests} requests (seed ${SEED}, ${RUNS} per route-method × ${TARGETS.length}, ` +
        `+${totals.replayed} refusals replayed alone, ${totals.accepted} accepted, ${totals.clientErrors} closed ` +
        `before an answer) in ${seconds} s, ${totals.errors500} responses >= 500, ${totals.hangs} hangs over ` +
        `${HANG_MS / 1000} s, ${totals.writes} unrefused writes; ${stalled.length} stalled uploads`,
    );
    // Not counted as hangs (the client withheld bytes it declared), but printed so they stay visible.
    for (const line of stalled.slice(0, 10)) console.log(`fuzz: stalled upload, the server waited: ${line}`);
    await cleanUp([server], prepared);
  });

  async function snapshot(): Promise<Record<string, unknown>> {
    return (await prepared.sql.rows<{ s: Record<string, unknown> }>(snapshotSql))[0]!.s;
  }

  function diff(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
    return Object.keys(b)
      .filter((k) => a[k] !== b[k])
      .map((k) => `${k}: ${a[k]} → ${b[k]}`);
  }

  async function headersFor(request: HostileRequest): Promise<Record<string, string>> {
    const who: Sender = request.sender;
    const base: Record<string, string> =
      who === "anonymous" || who === "bad-bearer"
        ? {}
        : who === "bad-cookie"
          ? { cookie: `${cookieName}=${request.path.length % 2 ? "garbage.sig" : "%00".repeat(50)}` }
          : who === "victim"
            ? { cookie: victimCookie }
            : await authHeaders(server!.url, who);
    return { ...base, ...request.headers };
  }

  /** Non-GET requests answered 2xx/3xx may write; anything else must not. */
  const accepted = (r: HostileRequest, o: Outcome) => r.method !== "GET" && o.status > 0 && o.status < 400;

  /**
   * After an accepted request that started a background run (a fork, or the decision that completed its step: both
   * answer with the run's `events`), wait for the run to end (its events stream closes then): its writes are not the
   * next request's.
   */
  async function settle(r: HostileRequest, o: Outcome) {
    if (!accepted(r, o)) return;
    // A message queued behind a run (double texting) starts when that run ends: wait for the thread to be quiet.
    const thread = r.path.match(/^\/api\/threads\/([^/?]+)/)?.[1];
    await settleRequest(o);
    if (thread) await quiet(decodeURIComponent(thread));
  }

  /** No run active on the thread, and nothing queued that could start one without a person's decision first. */
  async function quiet(threadId: string) {
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      const res = await authedFetch(`${server!.url}/api/threads/${threadId}`, {}, "viewer");
      if (res.status !== 200) return;
      const view = (await res.json()) as {
        status: string;
        activeRunId: string | null;
        queuedInputs?: unknown[];
        pendingInterrupts: unknown[];
      };
      const waitsForPerson = view.pendingInterrupts.length > 0 || view.status === "needs_attention";
      if (!view.activeRunId && (!view.queuedInputs?.length || waitsForPerson)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function settleRequest(o: Outcome) {
    let events: string | undefined;
    let done: { threadId?: string }[] | undefined;
    try {
      ({ events, done } = JSON.parse(o.text) as { events?: string; done?: { threadId?: string }[] });
    } catch {
      return; // not JSON (an SSE stream, read to its end already)
    }
    // A bulk decision resumes each item's run in the background and names no stream: wait for those runs to end.
    for (const threadId of new Set((done ?? []).map((d) => d.threadId).filter(Boolean))) {
      const until = Date.now() + 20_000;
      while (Date.now() < until) {
        const view = await (await authedFetch(`${server!.url}/api/threads/${threadId}`, {}, "viewer")).json();
        if (!view.activeRunId) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    if (events)
      await (
        await authedFetch(`${server!.url}${events}`, { signal: AbortSignal.timeout(20_000) }, "viewer")
      ).text();
  }

  async function run(request: HostileRequest, failures: Failure[], logFrom: number) {
    const headers = await headersFor(request);
    const outcome = await send(server!.url, request, headers);
    const fail = (kind: Failure["kind"]) =>
      failures.push({
        kind,
        request: describeRequest(request, headers),
        status: outcome.status,
        response: outcome.text.slice(0, 600),
        serverLog: kind === "status >= 500" ? server!.log().slice(logFrom).slice(-3000) : undefined,
      });
    if (outcome.status >= 500) fail("status >= 500");
    if (outcome.hang) fail("hang");
    if (outcome.clientError) totals.clientErrors++;
    if (outcome.stalled) stalled.push(describeRequest(request, headers).slice(0, 300));
    return { request, headers, outcome, fail };
  }

  it.each(TARGETS.map((t, i) => [t.name, i] as const))(
    "%s",
    async (_name, index) => {
      const target = TARGETS[index]!;
      const requests = fc.sample(target.build(ctx), { seed: SEED + index, numRuns: RUNS });
      const failures: Failure[] = [];
      const t0 = performance.now();
      let before = await snapshot();
      for (let i = 0; i < requests.length; i += BATCH) {
        const logFrom = server!.log().length;
        const results = await Promise.all(requests.slice(i, i + BATCH).map((r) => run(r, failures, logFrom)));
        for (const r of results) await settle(r.request, r.outcome);
        const after = await snapshot();
        const anyAccepted = results.some((r) => accepted(r.request, r.outcome));
        totals.accepted += results.filter((r) => accepted(r.request, r.outcome)).length;
        // Unchanged: nothing wrote. Changed: name the refusal that wrote (if any) by replaying each refusal of the
        // batch alone between two snapshots.
        if (diff(before, after).length > 0) {
          let culprit = false;
          for (const r of results.filter((x) => !accepted(x.request, x.outcome))) {
            const alone = await snapshot();
            const again = await run(r.request, failures, server!.log().length);
            totals.replayed++;
            await settle(again.request, again.outcome);
            const changes = diff(alone, await snapshot());
            if (!accepted(again.request, again.outcome) && changes.length > 0) {
              culprit = true;
              again.fail("unrefused write");
              failures.at(-1)!.response += ` | changed: ${changes.join("; ")}`;
            }
          }
          if (!anyAccepted && !culprit) {
            failures.push({
              kind: "unrefused write",
              request: results.map((r) => describeRequest(r.request, r.headers)).join("\n    "),
              status: 0,
              response: `batch of refusals changed: ${diff(before, after).join("; ")} (not reproduced alone)`,
            });
          }
          before = await snapshot();
        } else before = after;
      }
      const seconds = ((performance.now() - t0) / 1000).toFixed(1);
      const count = (kind: Failure["kind"]) => failures.filter((f) => f.kind === kind).length;
      console.log(
        `fuzz: ${target.name}: ${requests.length} requests in ${seconds} s, ${count("status >= 500")} >= 500, ` +
          `${count("hang")} hangs, ${count("unrefused write")} unrefused writes`,
      );
      totals.requests += requests.length;
      totals.errors500 += failures.filter((f) => f.kind === "status >= 500").length;
      totals.hangs += failures.filter((f) => f.kind === "hang").length;
      totals.writes += failures.filter((f) => f.kind === "unrefused write").length;
      const report = failures
        .slice(0, 8)
        .map(
          (f) =>
            `  ${f.kind}: ${f.request}\n    → ${f.status} ${f.response}${f.serverLog ? `\n    server: ${f.serverLog}` : ""}`,
        )
        .join("\n");
      expect(failures.length, `${failures.length} failures (seed ${SEED + index}):\n${report}`).toBe(0);
    },
    600_000,
  );

  it("still serves the prepared users (the fuzz did not sign anyone out or disable them)", async () => {
    for (const who of ["viewer", "operator", "supervisor", "admin"] as const) {
      expect((await authedFetch(`${server!.url}/api/threads?limit=1`, {}, who)).status).toBe(200);
    }
    expect((await signIn(server!.url, ADMIN_EMAIL)).length).toBeGreaterThan(0);
  });
});
