import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "@/e2e/support/server";
import { pausedTicket } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/*
 * Deadlines under crashes: two instances sweep one database while they are SIGKILLed at random and restarted.
 * 480 synthetic items (no graph behind them) only escalate; 20 real refund approvals also carry an expiry answer,
 * applied by `system:expiry` through the ledger. Every overdue item must escalate exactly once (one audit entry, one
 * `escalated_at`), and every expiry decision must be recorded exactly once (one ledger answer, one audited decision,
 * one resume run).
 */
const SYNTHETIC = 480;
const REAL = 20;
const KILLS = 8;
const ENV = { DEADLINE_SWEEP_MS: "150", SHUTDOWN_GRACE_MS: "500" };

describe("deadlines with two instances killed at random", () => {
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  const servers: (TestServer | undefined)[] = [undefined, undefined];
  let kills = 0;

  beforeAll(async () => {
    prepared = await prepareDatabase("qdl", { prefix: "ORD-6", count: REAL });
  }, 120_000);
  afterAll(async () => {
    await cleanUp(servers, prepared);
  }, 60_000);

  const start = async (i: number) => {
    servers[i] = await startTestServer({ databaseUrl: prepared.url, env: ENV });
  };

  it("escalates every overdue item once and records every expiry decision once", async () => {
    const { sql } = prepared;
    await start(0);
    // Real tickets first, with the default deadline (a day): they pause at their refund approval.
    const real: Awaited<ReturnType<typeof pausedTicket>>[] = [];
    for (let i = 0; i < REAL; i++)
      real.push(await pausedTicket(servers[0]!.url, `ORD-6${String(i).padStart(3, "0")}`));
    await start(1);
    // Now the policies: refund approvals expire into a rejection, synthetic input_text items only escalate.
    await sql.rows(
      `INSERT INTO sla_policies (id, action, min_amount_cents, due_seconds, expiry_answer) VALUES
        ('refund_approval:0', 'refund_approval', 0, 8, '{"status":"resolved","payload":{"decision":"reject","note":"Expired: no decision in time."}}'),
        ('input_text:0', 'input_text', 0, 45, NULL)`,
    );
    // The real ones are due 2–42 s from now (their deadline is re-read from the policy as if raised now).
    await sql.rows(
      `UPDATE decisions SET due_at = now() + (random() * 40 + 2) * interval '1 second',
         expiry_answer = '{"status":"resolved","payload":{"decision":"reject","note":"Expired: no decision in time."}}'
       WHERE interrupt_id = ANY($1::text[])`,
      [real.map((r) => r.interruptId)],
    );
    await sql.rows(
      `INSERT INTO threads (id, title, customer_message, status)
         SELECT 'syn-' || g, 'Synthetic ' || g, 'Question ' || g, 'interrupted' FROM generate_series(1, $1) g`,
      [SYNTHETIC],
    );
    // Raised 0–43 s ago with a 45 s policy: due 2–45 s from now, spread over the chaos.
    await sql.rows(
      `INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload, created_at)
         SELECT 'syn-i-' || g, 'syn-' || g, 'r', 'c', 'input_text', '{}', now() - random() * interval '43 seconds'
         FROM generate_series(1, $1) g`,
      [SYNTHETIC],
    );

    // Chaos: SIGKILL a random instance every 1–2 s (after its restart) and start a new one in its place.
    while (kills < KILLS) {
      await new Promise((r) => setTimeout(r, 1_000 + Math.random() * 1_000));
      const victim = Math.random() < 0.5 ? 0 : 1;
      await servers[victim]?.kill();
      kills++;
      await start(victim);
    }

    // Wait until every item is due (the chaos may end before the last deadline, on a fast machine or a slow one),
    // everything due was escalated and every expiry answer applied (or give up after a minute and a half).
    const deadline = Date.now() + 90_000;
    const left = async () =>
      (await sql.count(
        "decisions",
        "(interrupt_id LIKE 'syn-i-%' OR interrupt_id = ANY($1::text[])) AND status = 'pending' AND due_at > now()",
        [real.map((r) => r.interruptId)],
      )) +
      (await sql.count("decisions", "due_at <= now() AND escalated_at IS NULL")) +
      (await sql.count(
        "decisions",
        "status = 'pending' AND expiry_answer IS NOT NULL AND expiry_error IS NULL",
      ));
    while ((await left()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));

    const escalations = await sql.rows<{ interrupt_id: string; n: number }>(
      `SELECT d.interrupt_id, count(a.id)::int AS n FROM decisions d
         LEFT JOIN audit_log a ON a.interrupt_id = d.interrupt_id AND a.action = 'decision_escalated'
       WHERE d.due_at <= now() GROUP BY d.interrupt_id`,
    );
    const expiries = await sql.rows<{
      interrupt_id: string;
      status: string;
      resolved_by: string | null;
      audited: number;
      resumes: number;
    }>(
      `SELECT d.interrupt_id, d.status, d.resolved_by,
         (SELECT count(*)::int FROM audit_log a WHERE a.interrupt_id = d.interrupt_id AND a.action = 'decision') AS audited,
         (SELECT count(*)::int FROM runs r WHERE r.thread_id = d.thread_id AND r.kind = 'resume') AS resumes
       FROM decisions d WHERE d.interrupt_id = ANY($1::text[])`,
      [real.map((r) => r.interruptId)],
    );
    const summary = {
      kills,
      items: escalations.length,
      escalatedOnce: escalations.filter((e) => e.n === 1).length,
      escalatedTwice: escalations.filter((e) => e.n > 1).length,
      notEscalated: escalations.filter((e) => e.n === 0).length,
      expiredOnce: expiries.filter(
        (e) =>
          e.status === "resolved" && e.resolved_by === "system:expiry" && e.audited === 1 && e.resumes === 1,
      ).length,
      expiryErrors: await sql.count("decisions", "expiry_error IS NOT NULL"),
    };
    console.log("queue deadlines under kills:", JSON.stringify(summary));
    expect(summary).toEqual({
      kills: summary.kills,
      items: SYNTHETIC + REAL,
      escalatedOnce: SYNTHETIC + REAL,
      escalatedTwice: 0,
      notEscalated: 0,
      expiredOnce: REAL,
      expiryErrors: 0,
    });
  }, 300_000);
});
