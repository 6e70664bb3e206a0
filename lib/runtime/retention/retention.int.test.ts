import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { openRefundHarness, type RefundHarness, type ThreadConfig } from "@/e2e/support/refund-harness";
import { refundGraphInput } from "@/lib/agents/refund";
import { listCheckpointHistory } from "@/lib/checkpoint/history";
import { summarizePayload } from "@/lib/contract/questions";
import {
  listPendingDecisions,
  recordPendingDecisions,
  resolveDecision,
  supersedeOtherPending,
} from "@/lib/db/queries/decisions";
import { createThread, setThreadStatus } from "@/lib/db/queries/threads";
import { type PruneReport, pruneCheckpoints, pruneOnRequest } from "./retention";

/*
 * Threads made by the real refund graph on real Postgres, with histories that branch the way time travel makes them
 * branch (forks from the approval checkpoint):
 *   forked    — finished, then forked twice (approve again, reject): two abandoned branches;
 *   linear    — finished, never forked: nothing to delete;
 *   paused    — approved, then forked back to the approval, where it waits (pending decision);
 *   active    — finished and forked, with an active run row;
 *   loose     — finished and forked, but with no `threads` row (a graph invoked directly).
 */

let h: RefundHarness;
const sqlRows = <T>(text: string, params: unknown[] = []) => h.database.sql.query<T>(text, params);

/** The (channel, version) pairs a thread's checkpoints refer to ($1: the thread). */
const REFS = `SELECT DISTINCT v.channel, v.version FROM checkpoint.checkpoints c,
  jsonb_each_text(c.checkpoint -> 'channel_versions') v(channel, version) WHERE c.thread_id = $1`;

/** The versions a thread's checkpoints refer to that have no blob row, as `channel@version`. */
async function referencedWithoutRow(threadId: string): Promise<string[]> {
  const rows = await sqlRows<{ ref: string }>(
    `SELECT r.channel || '@' || r.version AS ref FROM (${REFS}) r WHERE NOT EXISTS (SELECT 1
       FROM checkpoint.checkpoint_blobs b WHERE b.thread_id = $1 AND b.channel = r.channel AND b.version = r.version)
     ORDER BY 1`,
    [threadId],
  );
  return rows.map((r) => r.ref);
}

/** Record the thread's open interrupts in the ledger and its status, as the runtime does when a run ends. */
async function syncLedger(config: ThreadConfig) {
  const { db } = h.database;
  const threadId = config.configurable.thread_id;
  const state = await h.graph.getState(config);
  const interrupts = state.tasks.flatMap((t) => t.interrupts);
  await recordPendingDecisions({
    db,
    rows: interrupts.map((i) => ({
      interruptId: i.id!,
      threadId,
      runId: randomUUID(),
      checkpointId: state.config.configurable?.checkpoint_id as string,
      action: (i.value as { action: string }).action,
      payload: i.value as object,
      ...summarizePayload(i.value),
    })),
  });
  await supersedeOtherPending({ db, threadId, keep: interrupts.map((i) => i.id!) });
  await setThreadStatus({ db, threadId, status: interrupts.length ? "interrupted" : "completed" });
}

async function startTicket(message: string, register = true): Promise<ThreadConfig> {
  const threadId = register
    ? (
        await createThread({
          db: h.database.db,
          title: message.slice(0, 40),
          customerMessage: message,
          orderRef: null,
        })
      ).id
    : `loose-${randomUUID()}`;
  const config = { configurable: { thread_id: threadId } };
  await h.graph.invoke(refundGraphInput({ messageId: randomUUID(), customerMessage: message }), config);
  if (register) await syncLedger(config);
  return config;
}

/** Answer the open decision the way a resume run does: settle the ledger, resume the graph, record what follows. */
async function decide(config: ThreadConfig, value: unknown, register = true) {
  if (register) {
    for (const d of await listPendingDecisions({
      db: h.database.db,
      threadId: config.configurable.thread_id,
    })) {
      await resolveDecision({
        db: h.database.db,
        interruptId: d.interruptId,
        resumeStatus: "resolved",
        answer: value,
        resolvedBy: "operator",
        resumeRunId: randomUUID(),
      });
    }
  }
  await h.graph.invoke(new Command({ resume: value }), config);
  if (register) await syncLedger(config);
}

/** Time travel: branch from the checkpoint where the thread waited for the refund approval. */
async function forkAtApproval(config: ThreadConfig, resume: unknown | null, register = true) {
  let atApproval: RunnableAddress | undefined;
  for await (const s of h.graph.getStateHistory(config)) {
    const action = s.tasks.flatMap((t) => t.interrupts).map((i) => (i.value as { action?: string }).action);
    if (action.includes("refund_approval")) atApproval = s.config as RunnableAddress;
  }
  if (!atApproval) throw new Error("no approval checkpoint in the history");
  const forkConfig = await h.graph.updateState(atApproval, { reason: "second look" });
  await h.graph.invoke(resume === null ? null : new Command({ resume }), forkConfig);
  if (register) await syncLedger(config);
}
type RunnableAddress = { configurable: Record<string, unknown> };

const approve = { decision: "approve" };
const send = { choice: "send" };

interface CheckpointNode {
  id: string;
  parent: string | null;
  young: boolean;
}

/** The thread's root checkpoints, and which are younger than `cutoffSql`. */
async function checkpointTree(threadId: string, cutoffSql = "now()"): Promise<CheckpointNode[]> {
  return sqlRows<CheckpointNode>(
    `SELECT checkpoint_id AS id, parent_checkpoint_id AS parent, created_at > ${cutoffSql} AS young
     FROM checkpoint.checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id`,
    [threadId],
  );
}

/** The retention rule, written independently: latest N and young checkpoints, plus all their ancestors. */
function expectedKept(nodes: CheckpointNode[], keepLatest: number): string[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const seed = [...nodes.map((n) => n.id)].sort().reverse().slice(0, keepLatest);
  const kept = new Set<string>();
  for (const id of [...seed, ...nodes.filter((n) => n.young).map((n) => n.id)]) {
    let node = byId.get(id);
    while (node && !kept.has(node.id)) {
      kept.add(node.id);
      node = node.parent ? byId.get(node.parent) : undefined;
    }
  }
  return [...kept].sort();
}

/** Every checkpoint, blob and write row of a thread (values by digest), for byte-for-byte comparisons. */
async function threadRows(threadId: string): Promise<string> {
  const [cps, blobs, writes] = await Promise.all([
    sqlRows(
      `SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint::text, metadata::text, created_at::text
       FROM checkpoint.checkpoints WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id`,
      [threadId],
    ),
    sqlRows(
      `SELECT checkpoint_ns, channel, version, type, md5(blob) FROM checkpoint.checkpoint_blobs WHERE thread_id = $1
       ORDER BY checkpoint_ns, channel, version`,
      [threadId],
    ),
    sqlRows(
      `SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, task_path, md5(blob) FROM checkpoint.checkpoint_writes
       WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id, task_id, idx`,
      [threadId],
    ),
  ]);
  return JSON.stringify({ cps, blobs, writes });
}

/** The graph state at every root checkpoint of a thread (values, next, tasks with interrupts, parent). */
async function statesByCheckpoint(threadId: string): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  for (const { id } of await checkpointTree(threadId)) {
    const s = await h.graph.getState({
      configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: id },
    });
    states.set(
      id,
      JSON.stringify({
        values: s.values,
        next: s.next,
        tasks: s.tasks.map((t) => ({ name: t.name, interrupts: t.interrupts })),
        parent: s.parentConfig?.configurable?.checkpoint_id ?? null,
      }),
    );
  }
  return states;
}

async function latestState(threadId: string) {
  const s = await h.graph.getState({ configurable: { thread_id: threadId } });
  return JSON.stringify({
    values: s.values,
    next: s.next,
    tasks: s.tasks,
    id: s.config.configurable?.checkpoint_id,
  });
}

async function ledgerCounts() {
  const [row] = await sqlRows(
    `SELECT (SELECT count(*) FROM decisions)::int AS decisions, (SELECT count(*) FROM refunds)::int AS refunds,
       (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM events)::int AS events,
       (SELECT count(*) FROM threads)::int AS threads, (SELECT count(*) FROM runs)::int AS runs,
       (SELECT count(*) FROM decisions WHERE status = 'pending')::int AS pending`,
  );
  return row;
}

/** Every parent id the history viewer shows (paging 5 at a time) is a checkpoint that is still there. */
async function historyChainIsWhole(threadId: string): Promise<number> {
  const entries = [];
  let before: string | null = null;
  do {
    const page = await listCheckpointHistory({ sql: h.database.sql, threadId, before, limit: 5 });
    entries.push(...page.entries);
    before = page.nextCursor;
  } while (before);
  const ids = new Set(entries.map((e) => e.checkpointId));
  for (const e of entries) if (e.parentCheckpointId) expect(ids.has(e.parentCheckpointId)).toBe(true);
  expect(entries.filter((e) => !e.parentCheckpointId)).toHaveLength(1);
  return entries.length;
}

const deleted = (r: PruneReport) => r.checkpointsDeleted + r.writesDeleted + r.blobsDeleted;

describe("checkpoint retention on postgres with refund graph threads", () => {
  const t = {} as Record<"forked" | "linear" | "paused" | "active" | "loose", string>;
  let statesBefore: Map<string, Map<string, string>>;
  let latestBefore: Map<string, string>;
  let countsBefore: Awaited<ReturnType<typeof ledgerCounts>>;

  beforeAll(async () => {
    h = await openRefundHarness("postgres");
    const forked = await startTicket("The laptop in ORD-1008 is broken, I want a refund.");
    await decide(forked, approve);
    await decide(forked, send);
    await forkAtApproval(forked, approve);
    await decide(forked, send);
    await forkAtApproval(forked, { decision: "reject", note: "Out of policy after all." });
    await decide(forked, send);

    const linear = await startTicket("My headphones (ORD-1002) stopped working. I want a refund.");
    await decide(linear, approve);
    await decide(linear, send);

    const paused = await startTicket("Refund ORD-1004 please, the backpack strap broke.");
    await decide(paused, approve); // bank transfer: now asks how to pay back
    await forkAtApproval(paused, null); // back to the approval, which waits again

    const active = await startTicket("Refund ORD-1010, the running shoes do not fit.");
    await decide(active, approve);
    await decide(active, send);
    await forkAtApproval(active, approve);
    await decide(active, send);
    await sqlRows(
      `INSERT INTO runs (id, thread_id, kind, status, owner) VALUES ($1, $2, 'input', 'running', 'w1')`,
      [randomUUID(), active.configurable.thread_id],
    );

    const loose = await startTicket("Refund ORD-1006, the lamp flickers.", false);
    await decide(loose, approve, false);
    await decide(loose, send, false);
    await forkAtApproval(loose, { decision: "reject", note: "Too late." }, false);

    Object.assign(t, {
      forked: forked.configurable.thread_id,
      linear: linear.configurable.thread_id,
      paused: paused.configurable.thread_id,
      active: active.configurable.thread_id,
      loose: loose.configurable.thread_id,
    });
    await sqlRows(
      `INSERT INTO events (thread_id, seq, run_id, type, event)
       SELECT id, g, 'run', 'RUN_STARTED', '{}'::jsonb FROM threads, generate_series(1, 3) g`,
    );
    statesBefore = new Map();
    latestBefore = new Map();
    for (const id of Object.values(t)) {
      statesBefore.set(id, await statesByCheckpoint(id));
      latestBefore.set(id, await latestState(id));
    }
    countsBefore = await ledgerCounts();
    expect(countsBefore).toMatchObject({ threads: 4, runs: 1, pending: 1, events: 12 });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("deletes nothing when every checkpoint is younger than the cutoff, or the latest N cover every branch", async () => {
    const rows = await Promise.all(Object.values(t).map(threadRows));
    const young = await pruneCheckpoints({ db: h.database.db, keepLatest: 1, olderThanMs: 3_600_000 });
    expect(young).toMatchObject({ threadsScanned: 5, threadsWithCandidates: 0, threadsPruned: 0 });
    expect(deleted(young)).toBe(0);
    const wide = await pruneCheckpoints({ db: h.database.db, keepLatest: 1000, olderThanMs: 0 });
    expect(wide.threadsWithCandidates + deleted(wide)).toBe(0);
    expect(await Promise.all(Object.values(t).map(threadRows))).toEqual(rows);
  });

  it("a dry run reports what a run would delete and changes nothing", async () => {
    const rows = await Promise.all(Object.values(t).map(threadRows));
    const dry = await pruneCheckpoints({ db: h.database.db, keepLatest: 1, olderThanMs: 0, dryRun: true });
    expect(dry).toMatchObject({
      dryRun: true,
      threadsScanned: 5,
      threadsWithCandidates: 4,
      threadsPruned: 1,
    });
    expect(dry).toMatchObject({ threadsSkippedActive: 2, threadsSkippedUnregistered: 1 });
    expect(dry.checkpointsDeleted).toBeGreaterThan(0);
    expect(await Promise.all(Object.values(t).map(threadRows))).toEqual(rows);
  });

  it("prunes abandoned branches of inactive threads; what remains reads exactly as before", async () => {
    const dry = await pruneCheckpoints({ db: h.database.db, keepLatest: 1, olderThanMs: 0, dryRun: true });
    const emptyBefore = new Set(await referencedWithoutRow(t.forked));
    const untouched = await Promise.all([t.linear, t.paused, t.active, t.loose].map(threadRows));
    const forkedTree = await checkpointTree(t.forked);
    const progress: PruneReport[] = [];
    const report = await pruneCheckpoints({
      db: h.database.db,
      keepLatest: 1,
      olderThanMs: 0,
      batchSize: 2,
      onProgress: (r) => progress.push(r),
    });
    expect(progress.map((p) => p.threadsScanned)).toEqual([2, 4, 5]);
    expect({ ...report, durationMs: 0, cutoff: "", dryRun: true, bytesBefore: 0 }).toEqual({
      ...dry,
      durationMs: 0,
      cutoff: "",
      bytesBefore: 0,
    });
    expect(report).toMatchObject({
      threadsPruned: 1,
      threadsSkippedActive: 2,
      threadsSkippedUnregistered: 1,
    });
    expect(report.writesDeleted).toBeGreaterThan(0);
    expect(report.blobsDeleted).toBeGreaterThan(0);
    expect(report.bytesDeleted).toBeGreaterThan(0);

    // The forked thread keeps exactly its head and the head's ancestors, each with the same state as before.
    const kept = expectedKept(forkedTree, 1);
    expect(kept.length).toBeLessThan(forkedTree.length);
    expect((await checkpointTree(t.forked)).map((n) => n.id)).toEqual(kept);
    expect(report.checkpointsDeleted).toBe(forkedTree.length - kept.length);
    const after = await statesByCheckpoint(t.forked);
    for (const [id, state] of after) expect(state).toBe(statesBefore.get(t.forked)!.get(id));
    expect(await historyChainIsWhole(t.forked)).toBe(kept.length);
    // No blob left that nothing refers to, and nothing referred to lost its blob: a version with no row after is one
    // that had none before (a channel its checkpoint left empty, which the saver stores no row for).
    const [gc] = await sqlRows<{ unreferenced: number }>(
      `WITH refs AS (${REFS})
       SELECT (SELECT count(*) FROM checkpoint.checkpoint_blobs b WHERE b.thread_id = $1 AND NOT EXISTS
           (SELECT 1 FROM refs r WHERE r.channel = b.channel AND r.version = b.version))::int AS unreferenced`,
      [t.forked],
    );
    expect(gc).toEqual({ unreferenced: 0 });
    expect(emptyBefore.size).toBeGreaterThan(0);
    expect((await referencedWithoutRow(t.forked)).filter((ref) => !emptyBefore.has(ref))).toEqual([]);

    // Every thread's latest state is unchanged; the others are untouched row for row; the audit trail is whole.
    for (const id of Object.values(t)) expect(await latestState(id)).toBe(latestBefore.get(id));
    expect(await Promise.all([t.linear, t.paused, t.active, t.loose].map(threadRows))).toEqual(untouched);
    for (const id of [t.linear, t.paused, t.active]) await historyChainIsWhole(id);
    expect(await ledgerCounts()).toEqual(countsBefore);
  });

  it("a second run deletes nothing more", async () => {
    const again = await pruneCheckpoints({ db: h.database.db, keepLatest: 1, olderThanMs: 0 });
    expect(again).toMatchObject({ threadsPruned: 0, threadsWithCandidates: 3, threadsSkippedActive: 2 });
    expect(deleted(again)).toBe(0);
  });

  it("keeps checkpoints younger than the cutoff with their ancestors, and the latest N", async () => {
    // The loose thread: everything two days old except the abandoned branch's tip.
    const tree = await checkpointTree(t.loose);
    const head = tree[tree.length - 1]!.id;
    const deadTip = tree.find((n) => n.id !== head && !tree.some((c) => c.parent === n.id))!.id;
    await sqlRows(
      `UPDATE checkpoint.checkpoints SET created_at = CASE WHEN checkpoint_id = $2 THEN now() ELSE now() - interval '2 days' END
       WHERE thread_id = $1`,
      [t.loose, deadTip],
    );
    const oneDay = 86_400_000;
    const opts = { db: h.database.db, includeUnregistered: true } as const;
    const first = await pruneCheckpoints({ ...opts, keepLatest: 1, olderThanMs: oneDay });
    expect(first.threadsPruned).toBe(0); // the young tip keeps its whole branch
    const aged = await checkpointTree(t.loose, "now() - interval '1 day'");
    expect(expectedKept(aged, 1)).toHaveLength(tree.length);

    await sqlRows(
      `UPDATE checkpoint.checkpoints SET created_at = now() - interval '2 days' WHERE thread_id = $1`,
      [t.loose],
    );
    const old = await checkpointTree(t.loose, "now() - interval '1 day'");
    const keepTwo = await pruneCheckpoints({ ...opts, keepLatest: 2, olderThanMs: oneDay });
    expect((await checkpointTree(t.loose)).map((n) => n.id)).toEqual(expectedKept(old, 2));
    expect(keepTwo.threadsPruned).toBe(1);
    const keepOne = await pruneCheckpoints({ ...opts, keepLatest: 1, olderThanMs: oneDay });
    expect((await checkpointTree(t.loose)).map((n) => n.id)).toEqual(expectedKept(old, 1));
    expect(keepTwo.checkpointsDeleted + keepOne.checkpointsDeleted).toBe(
      tree.length - expectedKept(old, 1).length,
    );
    expect(await latestState(t.loose)).toBe(latestBefore.get(t.loose));
    await historyChainIsWhole(t.loose);
    expect(await ledgerCounts()).toEqual(countsBefore);
  });

  it("respects a run claimed while the prune waits for the thread's lock", async () => {
    const config = await startTicket("Refund ORD-1007, the scarf is damaged.");
    await decide(config, approve);
    await decide(config, send);
    await forkAtApproval(config, approve);
    await decide(config, send);
    const threadId = config.configurable.thread_id;
    const rows = await threadRows(threadId);

    // What claimRun does: lock the thread row, insert the active run, commit — here held open across the prune.
    const claimer = await h.database.pool!.connect();
    let settled = false;
    try {
      await claimer.query("BEGIN");
      await claimer.query("SELECT id FROM threads WHERE id = $1 FOR UPDATE", [threadId]);
      await claimer.query(
        `INSERT INTO runs (id, thread_id, kind, status, owner) VALUES ($1, $2, 'input', 'running', 'w2')`,
        [randomUUID(), threadId],
      );
      const pruning = pruneCheckpoints({ db: h.database.db, keepLatest: 1, olderThanMs: 0 }).finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      await claimer.query("COMMIT");
      const report = await pruning;
      expect(report).toMatchObject({ threadsPruned: 0, threadsSkippedActive: 3 });
    } finally {
      await claimer.query("ROLLBACK").catch(() => {});
      claimer.release();
    }
    expect(await threadRows(threadId)).toBe(rows);
  });

  it("a supervisor's prune goes to the audit trail under their name with its report; a dry run does not", async () => {
    const by = { kind: "user", id: "u-supervisor", label: "sup@test.local", role: "supervisor" } as const;
    const audited = () =>
      sqlRows<{ actor: string; actor_id: string; detail: PruneReport }>(
        "SELECT actor, actor_id, detail FROM audit_log WHERE action = 'prune' ORDER BY id",
      );
    const keepEverything = { db: h.database.db, keepLatest: 1, olderThanMs: 3_600_000, by };
    expect((await pruneOnRequest({ ...keepEverything, dryRun: true })).dryRun).toBe(true);
    expect(await audited()).toEqual([]);
    const report = await pruneOnRequest({ ...keepEverything, dryRun: false });
    expect(deleted(report)).toBe(0);
    expect(await audited()).toEqual([{ actor: "sup@test.local", actor_id: "u-supervisor", detail: report }]);
  });
});
