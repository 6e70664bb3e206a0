import { openPostgres } from "@/lib/db/open";
import { authedFetch } from "../support/auth";
import { metricTable, metricValue, parsePrometheus } from "../support/prometheus";
import { recordApproval } from "../support/receipts";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { useTestServer } from "./setup";

const METRICS_TOKEN = "metrics-token-for-tests-0123456789";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `/api/metrics` after a scripted day on a fresh server: five refund tickets, five decisions taken over the API (two
 * approvals, a rejection, a reply sent, a reply not sent), one run that keeps crashing (abandoned: a failure) and
 * one orphaned run continued by the sweeper (a recovery). The counters must say exactly that.
 */
describe("metrics", () => {
  const ctx = useTestServer(
    "metrics",
    { prefix: "ORD-7", count: 10 },
    {
      METRICS_TOKEN,
      RUN_LEASE_MS: "1000",
      RUN_SWEEP_INTERVAL_MS: "200",
      MAX_RUN_ATTEMPTS: "2",
      EFFECT_POLL_MS: "100",
    },
  );

  async function scrape(headers: Record<string, string> = { authorization: `Bearer ${METRICS_TOKEN}` }) {
    const res = await fetch(ctx.url("/api/metrics"), { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    return parsePrometheus(await res.text());
  }

  it("is refused without the token or an admin session", async () => {
    const anonymous = await fetch(ctx.url("/api/metrics"));
    expect(anonymous.status).toBe(401);
    const wrong = await fetch(ctx.url("/api/metrics"), {
      headers: { authorization: "Bearer not-the-token" },
    });
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).code).toBe("unauthorized:metrics_token");
    const operator = await authedFetch(ctx.url("/api/metrics"), {}, "operator");
    expect(operator.status).toBe(403);
    expect((await operator.json()).code).toBe("forbidden:role");
    const intake = await authedFetch(ctx.url("/api/metrics"), {}, "intake");
    expect(intake.status).toBe(403);
    const admin = await authedFetch(ctx.url("/api/metrics"), {}, "admin");
    expect(admin.status).toBe(200);
    expect(await admin.text()).toContain("hitl_runs_total");
  });

  it("reports exactly the counts of a scripted day", async () => {
    const sql = ctx.prepared.sql;
    const threads: string[] = [];
    const approvals: string[] = [];
    for (let i = 0; i < 5; i++) {
      const message = `Refund ORD-700${i} please, the television arrived broken.`;
      const threadId = await createTicket(ctx.server!.url, message);
      const first = await runOnce(agentFor(ctx.server!.url, threadId), { message });
      expect(first.interrupts[0]?.reason).toBe("refund_approval");
      threads.push(threadId);
      approvals.push(first.interrupts[0]!.id);
    }
    const agent = (i: number) => agentFor(ctx.server!.url, threads[i]!);
    // Thread 0: approved, reply sent. Thread 1: rejected, reply not sent. Thread 2: approved, reply waits.
    const approved0 = await runOnce(agent(0), { resume: [decide(approvals[0]!, { decision: "approve" })] });
    await runOnce(agent(0), { resume: [answer(approved0.interrupts[0]!, { choice: "send" })] });
    const rejected = await runOnce(agent(1), {
      resume: [decide(approvals[1]!, { decision: "reject", note: "Outside the policy." })],
    });
    expect(rejected.interrupts[0]?.reason).toBe("confirm_email");
    await runOnce(agent(1), { resume: [answer(rejected.interrupts[0]!, { choice: "dont_send" })] });
    const approved2 = await runOnce(agent(2), { resume: [decide(approvals[2]!, { decision: "approve" })] });
    expect(approved2.interrupts[0]?.reason).toBe("confirm_email");

    // Thread 3: a resume whose owner died after crashing once already: the sweeper gives up on it (a failure).
    // Thread 4: a resume whose owner died: the sweeper continues it (a recovery).
    const failing = await orphanedResume(threads[3]!, approvals[3]!, 2);
    const recovered = await orphanedResume(threads[4]!, approvals[4]!, 1);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const rows = await sql.rows<{ id: string; status: string }>(
        "SELECT id, status FROM runs WHERE id = ANY($1)",
        [[failing, recovered]],
      );
      const effects = await sql.count("effects", "status = 'delivered'");
      if (rows.every((r) => r.status !== "running") && effects >= 4) break;
      if (Date.now() > deadline)
        throw new Error(`the day did not settle: ${JSON.stringify(rows)}, ${effects} effects`);
      await sleep(200);
    }
    expect(await sql.rows("SELECT status FROM runs WHERE id = $1", [failing])).toEqual([
      { status: "failed" },
    ]);
    expect(await sql.rows("SELECT status FROM runs WHERE id = $1", [recovered])).toEqual([
      { status: "interrupted" },
    ]);

    // Every run the server claimed has a trace id on its row, though no exporter is configured here.
    expect(await sql.count("runs", "trace_id IS NULL AND NOT (id = ANY($1))", [[failing, recovered]])).toBe(
      0,
    );

    const samples = await scrape();
    expect(metricTable(samples, "hitl_tickets_created_total")).toEqual({ "agent=refund": 5 });
    expect(metricTable(samples, "hitl_decisions_total")).toEqual({
      "action=refund_approval,outcome=approve": 2,
      "action=refund_approval,outcome=reject": 1,
      "action=confirm_email,outcome=send": 1,
      "action=confirm_email,outcome=dont_send": 1,
    });
    expect(metricValue(samples, "hitl_decision_latency_seconds_count")).toBe(5);
    expect(metricTable(samples, "hitl_runs_total")).toEqual({
      "kind=input,outcome=interrupted": 5,
      // two approvals, a rejection and the recovered run paused at the reply; two replies answered; one abandoned
      "kind=resume,outcome=interrupted": 4,
      "kind=resume,outcome=succeeded": 2,
      "kind=resume,outcome=failed": 1,
    });
    // Durations are timed for the runs that executed here (the abandoned one never ran).
    expect(metricValue(samples, "hitl_run_duration_seconds_count")).toBe(11);
    expect(metricValue(samples, "hitl_run_recoveries_total")).toBe(1);
    expect(metricTable(samples, "hitl_lease_takeovers_total")).toEqual({ "reason=lease_expired": 2 });
    // Three approved refunds paid (the recovered run approved one), one reply sent.
    expect(metricTable(samples, "hitl_effect_deliveries_total")).toEqual({
      "kind=payment,result=delivered": 3,
      "kind=email,result=delivered": 1,
    });
    // Shared state now: two replies wait for a decision, one thread failed.
    expect(metricTable(samples, "hitl_decisions_pending")).toEqual({ "action=confirm_email": 2 });
    expect(metricValue(samples, "hitl_decision_oldest_pending_age_seconds")).toBeGreaterThanOrEqual(0);
    // Durable timers have a gauge of their own (none here); they are not pending work.
    expect(samples.filter((s) => s.name === "hitl_timers_waiting").map((s) => s.value)).toEqual([0]);
    expect(metricTable(samples, "hitl_threads")).toEqual({
      "status=completed": 2,
      "status=interrupted": 2,
      "status=failed": 1,
    });
    expect(metricValue(samples, "hitl_sse_connections")).toBe(0);
    expect(metricValue(samples, "hitl_sse_connections_total")).toBeGreaterThanOrEqual(10);
    expect(metricValue(samples, "hitl_event_log_lag_seconds_count")).toBeGreaterThan(0);
    expect(metricValue(samples, "hitl_llm_call_seconds_count")).toBeGreaterThan(0);
    expect(metricValue(samples, "hitl_llm_errors_total")).toBe(0);

    // Bounded labels: no thread, run, order or decision id is a label value anywhere.
    const ids = [...threads, ...approvals, failing, recovered, "ORD-700"];
    for (const s of samples) {
      for (const value of Object.values(s.labels)) expect(ids.some((id) => value.includes(id))).toBe(false);
    }

    // The operations page shows the same numbers as the gauges.
    const page = await (await authedFetch(ctx.url("/operations"), {}, "supervisor")).text();
    expect(tile(page, "ops-pending")).toBe("2");
    expect(tile(page, "ops-failed-threads")).toBe("1");
    expect(tile(page, "ops-failed-effects")).toBe("0");
  });

  /** A resume run claimed by a process that died, its lease expired, recovered `attempts - 1` times already. */
  async function orphanedResume(threadId: string, interruptId: string, attempts: number): Promise<string> {
    const runId = crypto.randomUUID();
    const input = {
      kind: "resume",
      actor: "ghost",
      resume: [{ interruptId, status: "resolved", payload: { decision: "approve" } }],
    };
    await ctx.prepared.sql.rows(
      `UPDATE decisions SET status = 'resolved', resolved_by = 'ghost', resolved_at = now(), answer = '{"decision":"approve"}'
       WHERE interrupt_id = $1`,
      [interruptId],
    );
    // The approval's receipt, as the ledger writes it with the decision: the refund is paid only against it.
    const [order] = await ctx.prepared.sql.rows<{ id: string; amount_cents: number }>(
      "SELECT o.id, o.amount_cents FROM decisions d JOIN orders o ON o.id = d.order_id WHERE d.interrupt_id = $1",
      [interruptId],
    );
    const database = openPostgres(ctx.prepared.url, { max: 1 });
    try {
      await recordApproval({
        db: database.db,
        threadId,
        authorizes: [{ effect: "refund", orderId: order!.id, amountCents: order!.amount_cents }],
      });
    } finally {
      await database.close();
    }
    await ctx.prepared.sql.rows(
      `INSERT INTO runs (id, thread_id, kind, status, input, owner, lease_expires_at, attempts, started_at)
       VALUES ($1, $2, 'resume', 'running', $3, 'elsewhere:1:dead', now() - interval '1 minute', $4, now())`,
      [runId, threadId, JSON.stringify(input), attempts],
    );
    return runId;
  }
});

function decide(interruptId: string, payload: Record<string, unknown>) {
  return { interruptId, status: "resolved" as const, payload };
}

function tile(html: string, testId: string): string | undefined {
  return html.match(new RegExp(`data-testid="${testId}"[^>]*>([^<]*)<`))?.[1];
}
