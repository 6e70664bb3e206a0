import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { gate, untilWaitingOnLock } from "@/e2e/support/lock-wait";
import { createTestDatabase } from "@/e2e/support/pg";
import { migrateDatabase } from "../migrate";
import { type Database, openPostgres } from "../open";
import { enqueueInput, hasWaitingInput } from "./queued-inputs";
import { closeRun, type RunClose } from "./run-end";
import { insertRun, releaseRuns } from "./runs";
import { createThread, lockThread } from "./threads";

/*
 * A run's end in one statement (`closeRun`), on real Postgres with two connections: what it writes, that a run lost to
 * another owner writes nothing, and what it answers about input waiting in the thread's queue — exactly when nothing
 * raced it, and never "nothing waits" when a claim queued input while holding the thread's row (the statement's
 * snapshot is older than that input).
 */
describe("closeRun: a run's end in one statement", () => {
  let target: Awaited<ReturnType<typeof createTestDatabase>>;
  let database: Database;
  beforeAll(async () => {
    target = await createTestDatabase("runend");
    database = openPostgres(target.url, { max: 4 });
    await migrateDatabase(database);
  });
  afterAll(async () => {
    await database?.close();
    await target?.drop();
  });

  async function runningThread(owner: string): Promise<{ threadId: string; runId: string }> {
    const thread = await createThread({
      db: database.db,
      title: "t",
      customerMessage: "Refund my order",
      orderRef: null,
    });
    const runId = randomUUID();
    await insertRun({
      db: database.db,
      run: {
        id: runId,
        threadId: thread.id,
        kind: "input",
        input: { kind: "input", messageId: "m", text: "Refund my order" },
        fromCheckpointId: null,
        owner,
        startedBy: "u",
        startedByLabel: "u",
        agentKey: "refund@1",
        leaseMs: 60_000,
      },
    });
    await database.db.execute(sql`UPDATE threads SET status = 'running' WHERE id = ${thread.id}`);
    return { threadId: thread.id, runId };
  }

  function ending(threadId: string, runId: string, owner: string): RunClose {
    return {
      threadId,
      runId,
      owner,
      status: "interrupted",
      events: [
        { seq: 1, runId, type: "RUN_FINISHED", event: { type: "RUN_FINISHED", threadId, runId, seq: 1 } },
      ],
      threadStatus: "interrupted",
      contextOrder: "ORD-1",
      head: {
        checkpointId: "cp-1",
        decisions: [
          {
            interruptId: `i-${runId}`,
            action: "approve_refund",
            payload: { action: "approve_refund", amount: 1 },
            title: "Approve",
            orderId: "ORD-1",
            customerName: null,
            amountCents: 100,
            currency: "usd",
          },
        ],
      },
    };
  }

  async function queueInput(db: Database["db"], threadId: string): Promise<void> {
    await enqueueInput({
      db,
      entry: {
        id: randomUUID(),
        threadId,
        input: { kind: "input", messageId: "m2", text: "and another thing" },
        strategy: "enqueue",
        behindRunId: null,
        startedBy: "u",
        startedByLabel: "u",
      },
    });
  }

  const one = async <T>(query: ReturnType<typeof sql>) =>
    ((await database.db.execute(query)) as unknown as { rows: T[] }).rows[0] as T;

  it("writes the run's end at once, and answers that no input waits", async () => {
    const { threadId, runId } = await runningThread("owner-a");
    const result = await closeRun(database.db, ending(threadId, runId, "owner-a"));
    expect(result).toEqual({ closed: true, inputWaiting: false });
    expect(
      await one(sql`SELECT status, finished_at IS NOT NULL AS finished FROM runs WHERE id = ${runId}`),
    ).toEqual({
      status: "interrupted",
      finished: true,
    });
    expect(
      await one(
        sql`SELECT status, last_seq::int AS last_seq, context_order FROM threads WHERE id = ${threadId}`,
      ),
    ).toEqual({ status: "interrupted", last_seq: 1, context_order: "ORD-1" });
    expect(await one(sql`SELECT count(*)::int AS n FROM events WHERE thread_id = ${threadId}`)).toEqual({
      n: 1,
    });
    expect(
      await one(sql`SELECT status, amount_cents FROM decisions WHERE interrupt_id = ${`i-${runId}`}`),
    ).toEqual({ status: "pending", amount_cents: 100 });
  });

  it("a run ending asking nothing while a decision of its thread is pending: nothing is written, and it is named", async () => {
    const { threadId, runId } = await runningThread("owner-p");
    // An earlier run left a decision pending.
    await database.db.execute(sql`INSERT INTO decisions (interrupt_id, thread_id, run_id, checkpoint_id, action, payload)
      VALUES (${`old-${runId}`}, ${threadId}, ${runId}, 'cp-0', 'approve_refund', '{}'::jsonb)`);
    const succeeded: RunClose = {
      ...ending(threadId, runId, "owner-p"),
      status: "succeeded",
      threadStatus: "completed",
      head: { checkpointId: "cp-1", decisions: [] },
      refuseIfPending: true,
    };
    expect(await closeRun(database.db, succeeded)).toEqual({
      closed: false,
      inputWaiting: undefined,
      pending: [`old-${runId}`],
    });
    expect(await one(sql`SELECT status FROM runs WHERE id = ${runId}`)).toEqual({ status: "running" });
    expect(await one(sql`SELECT status FROM decisions WHERE thread_id = ${threadId}`)).toEqual({
      status: "pending",
    });
    expect(await one(sql`SELECT count(*)::int AS n FROM events WHERE thread_id = ${threadId}`)).toEqual({
      n: 0,
    });
    // Once the decision is taken, the same end goes through.
    await database.db.execute(sql`UPDATE decisions SET status = 'resolved' WHERE thread_id = ${threadId}`);
    expect(await closeRun(database.db, succeeded)).toEqual({
      closed: true,
      inputWaiting: false,
      pending: [],
    });
  });

  it("a run given back because the database was away is not counted as an attempt; one given back otherwise is", async () => {
    const owner = `owner-${randomUUID()}`;
    const { runId } = await runningThread(owner);
    const attempts = async () =>
      (
        (await database.db.execute(sql`SELECT attempts, owner FROM runs WHERE id = ${runId}`)) as unknown as {
          rows: { attempts: number; owner: string | null }[];
        }
      ).rows[0];
    const before = await attempts();
    expect(before?.owner).toBe(owner);
    expect(await releaseRuns({ db: database.db, owner, runId, uncount: true })).toEqual([runId]);
    expect(await attempts()).toEqual({ attempts: (before?.attempts ?? 1) - 1, owner: null });
    await database.db.execute(sql`UPDATE runs SET owner = ${owner}, attempts = 3 WHERE id = ${runId}`);
    expect(await releaseRuns({ db: database.db, owner, runId })).toEqual([runId]);
    expect(await attempts()).toEqual({ attempts: 3, owner: null });
  });

  it("a run another owner holds: nothing is written", async () => {
    const { threadId, runId } = await runningThread("owner-b");
    const result = await closeRun(database.db, ending(threadId, runId, "someone-else"));
    expect(result.closed).toBe(false);
    expect(await one(sql`SELECT status FROM runs WHERE id = ${runId}`)).toEqual({ status: "running" });
    expect(
      await one(sql`SELECT status, last_seq::int AS last_seq FROM threads WHERE id = ${threadId}`),
    ).toEqual({
      status: "running",
      last_seq: 0,
    });
    expect(await one(sql`SELECT count(*)::int AS n FROM events WHERE thread_id = ${threadId}`)).toEqual({
      n: 0,
    });
    expect(await one(sql`SELECT count(*)::int AS n FROM decisions WHERE thread_id = ${threadId}`)).toEqual({
      n: 0,
    });
  });

  it("input queued before the run's end: it answers that input waits", async () => {
    const { threadId, runId } = await runningThread("owner-c");
    await queueInput(database.db, threadId);
    expect(await closeRun(database.db, ending(threadId, runId, "owner-c"))).toEqual({
      closed: true,
      inputWaiting: true,
    });
  });

  it("input queued by a claim holding the thread's row while the run's end waits: never 'nothing waits'", async () => {
    const { threadId, runId } = await runningThread("owner-d");
    const { opened: released, open: release } = gate();
    const { opened: isLocked, open: locked } = gate();
    // The claim: locks the thread (it is running, so the input is queued), then holds its transaction open.
    const claim = database.db.transaction(async (tx) => {
      await lockThread({ tx, threadId });
      await queueInput(tx, threadId);
      locked();
      await released;
    });
    await isLocked;
    const ended = closeRun(database.db, ending(threadId, runId, "owner-d"));
    // The run's end waits for the claim's lock on the thread's row.
    await untilWaitingOnLock(database.sql);
    release();
    await claim;
    const result = await ended;
    expect(result.closed).toBe(true);
    expect(result.inputWaiting).not.toBe(false);
    // Read after the commit (what the caller does with "not known"), the input is there.
    expect(await hasWaitingInput({ db: database.db, threadId })).toBe(true);
  });
});
