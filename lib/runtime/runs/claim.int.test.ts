import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { countPoolStatements } from "@/e2e/bench/measure";
import { withMigratedDatabase } from "@/e2e/support/migrated-database";
import { errorCodeOf } from "@/lib/contract/errors";
import { QUESTION_KINDS } from "@/lib/contract/questions/kinds";
import type { Principal } from "@/lib/contract/roles";
import { openPostgres } from "@/lib/db/open";
import { createThread } from "@/lib/db/queries/threads";
import { SEALED_FORMATS, sealingAllowed } from "@/lib/db/vault";
import { getAgent } from "../agents/registry";
import { claimRun } from "./claim";

/*
 * The first run of a thread no run was ever claimed for (issue 31): its claim reads no decisions and no queued
 * input — there can be none — so it is BEGIN, the thread's lock, the run's insert, COMMIT. Whatever the claims that
 * follow, each thread has at most one active run, and a later claim still refuses while one is active.
 */

const ctx = withMigratedDatabase("claim");

const operator: Principal = { kind: "user", id: "op-1", label: "Olga", role: "operator" } as Principal;

function input(threadId: string, text: string) {
  return {
    threadId,
    runId: randomUUID(),
    messages: [{ id: randomUUID(), role: "user" as const, content: text }],
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
  };
}

async function newThread(): Promise<string> {
  const thread = await createThread({
    db: ctx.database.db,
    title: "t",
    customerMessage: "Please refund ORD-1.",
    orderRef: null,
    agentVersion: getAgent("refund").version,
  });
  return thread.id;
}

it("claims a new thread's first run in four statements", async () => {
  const threadId = await newThread();
  // Whether the thread's rows are sealed is read once per 5 s per process (lib/db/vault.ts), not per claim.
  await sealingAllowed(ctx.database.sql, "sealed-rows");
  const own = openPostgres(ctx.database.pool!.options.connectionString as string, { max: 1 });
  try {
    const counter = countPoolStatements(own.pool!);
    const claimed = await claimRun({
      database: own,
      threadId,
      input: input(threadId, "hello"),
      principal: operator,
      leaseMs: 60_000,
    });
    expect("run" in claimed && claimed.run.threadId).toBe(threadId);
    expect(counter.statements).toBe(4);
  } finally {
    await own.close();
  }
});

it("however many first claims race for a new thread, one run starts and the others are refused as busy", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 2, max: 6 }), async (n) => {
      const threadId = await newThread();
      const outcomes = await Promise.allSettled(
        Array.from({ length: n }, (_, i) =>
          claimRun({
            database: ctx.database,
            threadId,
            input: input(threadId, `message ${i}`),
            principal: operator,
            leaseMs: 60_000,
          }),
        ),
      );
      const started = outcomes.filter((o) => o.status === "fulfilled" && "run" in o.value);
      expect(started).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === "rejected") expect(errorCodeOf(o.reason)).toBe("conflict:run_active");
        else if (!("run" in o.value)) expect(o.value.queued.threadId).toBe(threadId);
      }
      const [active] = (
        await ctx.database.pool!.query(
          "SELECT count(*)::int AS n FROM runs WHERE thread_id = $1 AND status IN ('queued', 'running')",
          [threadId],
        )
      ).rows as { n: number }[];
      expect(active?.n).toBe(1);
    }),
    { numRuns: 6 },
  );
});

it("a resume reads its thread's open decisions and who was involved in one statement; four-eyes still holds", async () => {
  const thread = await createThread({
    db: ctx.database.db,
    title: "t",
    customerMessage: "Please refund ORD-1.",
    orderRef: "ORD-1",
    agentVersion: getAgent("refund").version,
    createdBy: "op-1",
  });
  const interruptId = randomUUID();
  // The question kind's own example (ORD-1, EUR 100.00: under the supervisor threshold).
  const payload = QUESTION_KINDS.refund_approval.example;

  await ctx.database.pool!.query(
    `INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload)
     VALUES ($1, $2, 'r0', 'cp-0', 'refund_approval', $3::jsonb)`,
    [interruptId, thread.id, JSON.stringify(payload)],
  );
  await ctx.database.pool!.query("UPDATE threads SET status = 'interrupted' WHERE id = $1", [thread.id]);
  const resume = (principal: Principal) => ({
    database: own,
    threadId: thread.id,
    input: {
      ...input(thread.id, "approve"),
      messages: [],
      resume: [{ interruptId, status: "resolved" as const, payload: { decision: "approve" } }],
    },
    principal,
    leaseMs: 60_000,
  });
  const own = openPostgres(ctx.database.pool!.options.connectionString as string, { max: 1 });
  try {
    // Whether every instance reads sealed values is asked at most every 5 s (lib/db/vault.ts), process-wide: asked
    // now (on another pool), so a slow machine's clock does not put that read inside the counts below.
    for (const format of SEALED_FORMATS) await sealingAllowed(ctx.database.sql, format);
    const counter = countPoolStatements(own.pool!);
    // The operator who filed the ticket may not approve its refund: BEGIN, lock, the read, ROLLBACK.
    const refused = await claimRun(resume(operator)).catch((error: unknown) => error);
    expect(errorCodeOf(refused)).toBe("forbidden:four_eyes_own_thread");
    expect(counter.statements).toBe(4);
    // Another operator may: BEGIN, lock, the read, their money limits (delegated authority), what is left to refund
    // on the order now (the question as the ledger says it: `interrupts.current`), the decision, the run, COMMIT.
    const before = counter.statements;
    const other = { kind: "user", id: "op-2", label: "Omar", role: "operator" } as Principal;
    const claimed = await claimRun(resume(other));
    expect("run" in claimed && claimed.run.kind).toBe("resume");
    expect(counter.statements - before).toBe(8);
  } finally {
    await own.close();
  }
});
