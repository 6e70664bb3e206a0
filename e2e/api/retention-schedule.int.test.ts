import { describe, expect, it } from "vitest";
import { openPostgres } from "@/lib/db/open";
import { finishJob, takeJobLease } from "@/lib/db/queries/scheduled-jobs";
import { authedFetch } from "../support/auth";
import { type Backend, openBackend } from "../support/backends";
import { metricTable, metricValue, parsePrometheus } from "../support/prometheus";
import { agentFor, answer, createTicket, runOnce } from "./client";
import { cleanUp, prepareDatabase, startTestServer } from "./setup";

/*
 * Retention runs by itself: a server left running with a short schedule bounds a finished thread's storage to the
 * policy's figure without anyone calling prune, says so in its metrics, and two instances never run it at once.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("scheduled retention", () => {
  it("a finished thread shrinks to the policy's checkpoints on its own, on two instances sharing the work", async () => {
    const prepared = await prepareDatabase("retsched");
    const env = {
      RETENTION_SCHEDULE: "300ms",
      RETENTION_KEEP_CHECKPOINTS: "2",
      // 3.6 s: long enough to count the finished thread's checkpoints before the schedule truncates it.
      RETENTION_TRUNCATE_AFTER_HOURS: "0.001",
      RETENTION_COMPACT_AFTER_MINUTES: "0",
      RETENTION_ARCHIVE_AFTER_DAYS: "0",
    };
    const a = await startTestServer({ databaseUrl: prepared.url, env });
    const b = await startTestServer({ databaseUrl: prepared.url, env });
    try {
      // A ticket the policy approves by itself (€24.98), then a person sends the reply: the thread completes.
      const message = "Please refund ORD-1001, both mugs arrived chipped.";
      const threadId = await createTicket(a.url, message);
      const agent = agentFor(a.url, threadId);
      const first = await runOnce(agent, { message });
      expect(first.interrupts[0]?.reason).toBe("confirm_email");
      const checkpointsOf = () => prepared.sql.count("checkpoint.checkpoints", "thread_id = $1", [threadId]);
      await runOnce(agent, { resume: [answer(first.interrupts[0]!, { choice: "send" })] });
      const before = await checkpointsOf();
      expect(before).toBeGreaterThan(2);

      // Nobody calls prune: the schedule does, within a few of its intervals.
      let after = before;
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && after > 2) {
        await sleep(200);
        after = await checkpointsOf();
      }
      expect(after).toBe(2);

      const [job] = await prepared.sql.rows<{ runs: number; last_ok: boolean; lease_holder: string | null }>(
        "SELECT runs, last_ok, lease_holder FROM scheduled_jobs WHERE name = 'retention'",
      );
      expect(job?.runs).toBeGreaterThanOrEqual(2);
      expect(job?.last_ok).toBe(true);
      // The run that removed them is in the audit trail, by the system, with the figures.
      const audited = await prepared.sql.rows<{ removed: number }>(
        `SELECT sum((s->>'checkpointsDeleted')::int)::int AS removed
         FROM audit_log, jsonb_array_elements(detail->'steps') s
         WHERE action = 'prune' AND actor = 'system:retention'`,
      );
      expect(audited[0]?.removed).toBe(before - 2);
      // The metrics say it too: runs by outcome on each instance, removed rows summed over both.
      const removed = { checkpoints: 0 };
      let runs = 0;
      for (const server of [a, b]) {
        const text = await (await authedFetch(`${server.url}/api/metrics`, {}, "admin")).text();
        const samples = parsePrometheus(text);
        runs += metricTable(samples, "hitl_retention_runs_total")["outcome=ok"] ?? 0;
        removed.checkpoints += metricTable(samples, "hitl_retention_removed_total")["what=checkpoints"] ?? 0;
        expect(metricValue(samples, "hitl_retention_last_run_timestamp_seconds")).toBeGreaterThan(0);
      }
      expect(runs).toBeGreaterThanOrEqual(2);
      expect(removed.checkpoints).toBe(before - 2);
    } finally {
      await cleanUp([a, b], prepared);
    }
  });

  it("the lease: one holder at a time among many instances asking at once", async () => {
    const prepared = await prepareDatabase("retlease");
    const databases = [0, 1, 2, 3].map(() => openPostgres(prepared.url, { max: 2 }));
    try {
      let active = 0;
      let most = 0;
      let runs = 0;
      const stopAt = Date.now() + 2_000;
      await Promise.all(
        databases.map(async (database, i) => {
          const holder = `instance-${i}`;
          while (Date.now() < stopAt) {
            const job = await takeJobLease({
              db: database.db,
              name: "t",
              holder,
              everyMs: 0,
              leaseMs: 60_000,
            });
            if (!job) {
              await sleep(1);
              continue;
            }
            active += 1;
            most = Math.max(most, active);
            await sleep(5); // the job's work, across several awaits
            active -= 1;
            runs += 1;
            await finishJob({ db: database.db, name: "t", holder, ok: true, report: null, error: null });
          }
        }),
      );
      expect(most).toBe(1);
      expect(runs).toBeGreaterThan(20);
      const [row] = await prepared.sql.rows<{ runs: number }>(
        "SELECT runs FROM scheduled_jobs WHERE name = 't'",
      );
      expect(row?.runs).toBe(runs);
    } finally {
      await Promise.all(databases.map((d) => d.close()));
      await cleanUp([], prepared);
    }
  });

  it.each<Backend>(["postgres", "pglite"])(
    "on %s, a dead holder keeps the job only until its lease lapses; a job not yet due is not taken",
    async (kind) => {
      const backend = await openBackend(kind);
      const { db } = backend.database;
      try {
        expect(
          await takeJobLease({ db, name: "d", holder: "dies", everyMs: 0, leaseMs: 300 }),
        ).not.toBeNull();
        expect(await takeJobLease({ db, name: "d", holder: "next", everyMs: 0, leaseMs: 300 })).toBeNull();
        await sleep(400);
        expect(
          await takeJobLease({ db, name: "d", holder: "next", everyMs: 0, leaseMs: 300 }),
        ).not.toBeNull();
        await finishJob({ db, name: "d", holder: "next", ok: true, report: null, error: null });
        expect(await takeJobLease({ db, name: "d", holder: "x", everyMs: 60_000, leaseMs: 300 })).toBeNull();
      } finally {
        await backend.close();
      }
    },
  );
});
