import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { openRefundHarness, type RefundHarness, type ThreadConfig } from "@/e2e/support/refund-harness";
import { refundGraphInput } from "@/lib/agents/refund";
import { readCutoff, truncateThreadRows } from "@/lib/checkpoint/retention";
import { createThread, setThreadStatus } from "@/lib/db/queries/threads";
import { applyRetention } from "./retention-policy";

/*
 * History truncation (policy step 1) on PGlite with refund graph threads: the last N checkpoints of the head chain
 * stay, the oldest kept becomes a root marked `truncated`, a young fork keeps its whole chain, a pending thread is
 * never touched, and every kept checkpoint still loads its state.
 */
let h: RefundHarness;
const q = <T>(text: string, params: unknown[] = []) => h.database.sql.query<T>(text, params);

async function ticket(message: string): Promise<ThreadConfig> {
  const { id } = await createThread({
    db: h.database.db,
    title: message.slice(0, 40),
    customerMessage: message,
    orderRef: null,
  });
  const config = { configurable: { thread_id: id } };
  await h.graph.invoke(refundGraphInput({ messageId: randomUUID(), customerMessage: message }), config);
  return config;
}
const resume = (config: ThreadConfig, value: unknown) =>
  h.graph.invoke(new Command({ resume: value }), config);

async function forkAtApproval(config: ThreadConfig, value: unknown) {
  let at: { configurable: Record<string, unknown> } | undefined;
  for await (const s of h.graph.getStateHistory(config)) {
    if (
      s.tasks.some((t) =>
        t.interrupts.some((i) => (i.value as { action?: string }).action === "refund_approval"),
      )
    ) {
      at = s.config as typeof at;
    }
  }
  const fork = await h.graph.updateState(at!, { reason: "second look" });
  await h.graph.invoke(new Command({ resume: value }), fork);
}

const tree = (threadId: string) =>
  q<{ id: string; parent: string | null; truncated: string | null }>(
    `SELECT checkpoint_id AS id, parent_checkpoint_id AS parent, metadata ->> 'truncated' AS truncated
     FROM checkpoint.checkpoints WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id`,
    [threadId],
  );
const everything = async (threadId: string) =>
  JSON.stringify(
    await q(
      `SELECT (SELECT string_agg(c::text, '|' ORDER BY c.checkpoint_id) FROM checkpoint.checkpoints c WHERE thread_id = $1) AS c,
         (SELECT string_agg(md5(b.blob), '|' ORDER BY b.channel, b.version) FROM checkpoint.checkpoint_blobs b
           WHERE thread_id = $1) AS b,
         (SELECT count(*) FROM checkpoint.checkpoint_writes WHERE thread_id = $1) AS w`,
      [threadId],
    ),
  );

describe("history truncation with refund graph threads (PGlite)", () => {
  let forked: ThreadConfig;
  let linear: ThreadConfig;
  let paused: ThreadConfig;
  beforeAll(async () => {
    h = await openRefundHarness("pglite");
    forked = await ticket("The laptop in ORD-1008 is broken, I want a refund.");
    await resume(forked, { decision: "approve" });
    await resume(forked, { choice: "send" });
    await forkAtApproval(forked, { decision: "reject", note: "Out of policy after all." });
    await resume(forked, { choice: "send" });
    linear = await ticket("My headphones (ORD-1002) stopped working. I want a refund.");
    await resume(linear, { decision: "approve" });
    await resume(linear, { choice: "send" });
    paused = await ticket("Refund ORD-1004 please, the backpack strap broke.");
    for (const c of [forked, linear]) {
      await setThreadStatus({ db: h.database.db, threadId: c.configurable.thread_id, status: "completed" });
    }
    await setThreadStatus({
      db: h.database.db,
      threadId: paused.configurable.thread_id,
      status: "interrupted",
    });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it("a young fork keeps its whole chain while the head chain keeps its last N", async () => {
    const threadId = forked.configurable.thread_id;
    const all = await tree(threadId);
    const tips = all.filter((c) => !all.some((x) => x.parent === c.id)).map((c) => c.id);
    expect(tips).toHaveLength(2);
    const cutoff = await readCutoff({ db: h.database.db, olderThanMs: 3_600_000 });
    const r = await truncateThreadRows({ db: h.database.db, threadId, keepLast: 2, cutoff, dryRun: false });
    const kept = await tree(threadId);
    expect(r.checkpoints).toBe(all.length - kept.length);
    // Both tips are still there; every kept checkpoint's parent is kept or it is a root.
    expect(tips.every((id) => kept.some((c) => c.id === id))).toBe(true);
    for (const c of kept) if (c.parent) expect(kept.some((p) => p.id === c.parent)).toBe(true);
    // The old branch goes back to the thread's first checkpoint, unmarked; the head's chain to a truncated root.
    const roots = kept.filter((c) => c.parent === null);
    expect(roots.map((c) => c.truncated).sort()).toEqual(r.roots === 1 ? [null, "true"].sort() : [null]);
    expect(roots.some((c) => c.id === all[0]!.id && c.truncated === null)).toBe(true);
  });

  it("keeps the last N of the head chain once branches are old: the oldest kept is a root marked truncated", async () => {
    const threadId = linear.configurable.thread_id;
    const latest = await h.graph.getState(linear);
    const all = await tree(threadId);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const r = await truncateThreadRows({
      db: h.database.db,
      threadId,
      keepLast: 3,
      cutoff: future,
      dryRun: false,
    });
    expect(r.checkpoints).toBe(all.length - 3);
    expect(r.roots).toBe(1);
    expect(r.blobs).toBeGreaterThan(0);
    const kept = await tree(threadId);
    expect(kept.map((c) => c.truncated)).toEqual(["true", null, null]);
    expect(kept[0]!.parent).toBeNull();
    expect(kept.slice(1).map((c) => c.parent)).toEqual(kept.slice(0, 2).map((c) => c.id));
    // The head is the same, and every kept checkpoint loads its whole state.
    const after = await h.graph.getState(linear);
    expect(after.values).toEqual(latest.values);
    for (const c of kept) {
      const s = await h.graph.getState({
        configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: c.id },
      });
      expect(s.values.messages.length).toBeGreaterThan(0);
    }
    // Again: nothing more to do.
    const again = await truncateThreadRows({
      db: h.database.db,
      threadId,
      keepLast: 3,
      cutoff: future,
      dryRun: false,
    });
    expect(again).toMatchObject({ checkpoints: 0, roots: 0, blobs: 0, writes: 0 });
  });

  it("the policy truncates finished threads only: a pending thread stays byte for byte", async () => {
    const pausedBefore = await everything(paused.configurable.thread_id);
    const report = await applyRetention({
      db: h.database.db,
      policy: {
        keepCheckpoints: 2,
        truncateAfterMs: 0,
        compactAfterMs: 0,
        archiveAfterMs: null,
        archiveDir: "/nonexistent",
      },
      steps: ["history"],
      actor: { id: "system:test", label: "test", role: null },
    });
    expect(report.steps[0]).toMatchObject({ step: "history", threadsChanged: 2 });
    expect(await tree(linear.configurable.thread_id)).toHaveLength(2);
    // The old fork is gone now: the forked thread is one chain of 2 from a truncated root.
    expect((await tree(forked.configurable.thread_id)).map((c) => c.truncated)).toEqual(["true", null]);
    expect(await everything(paused.configurable.thread_id)).toBe(pausedBefore);
    const [audit] = await q<{ n: number }>("SELECT count(*)::int AS n FROM audit_log WHERE action = 'prune'");
    expect(audit!.n).toBe(1);
  });
});
