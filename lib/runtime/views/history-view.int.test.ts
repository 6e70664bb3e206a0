import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { openRefundHarness, type RefundHarness } from "@/e2e/support/refund-harness";
import { refundGraphInput } from "@/lib/agents/refund/graph";
import { createThread } from "@/lib/db/queries/threads";
import { getThreadHistory, type HistoryCheckpoint, type HistoryDeps } from "./history-view";

/*
 * The real refund graph on our checkpointer (offline model, seeded demo orders) in a fresh Postgres database. The
 * thread rows are created as the API creates them, so the views find them.
 */
describe("getThreadHistory on postgres", () => {
  let h: RefundHarness;
  let deps: HistoryDeps;

  beforeAll(async () => {
    h = await openRefundHarness("postgres");
    deps = { db: h.database.db, sql: h.database.sql };
  });
  afterAll(async () => {
    await h?.close();
  });

  async function start(customerMessage: string) {
    const thread = await createThread({ db: h.database.db, title: "test", customerMessage, orderRef: null });
    const config = { configurable: { thread_id: thread.id } };
    await h.graph.invoke(refundGraphInput({ messageId: randomUUID(), customerMessage }), config);
    return { threadId: thread.id, config };
  }

  /** ORD-1002 approved and emailed to the end, then forked at the approval checkpoint and rejected there. */
  async function approvedThenForkedToReject() {
    const { threadId, config } = await start("My headphones (ORD-1002) stopped working. I want a refund.");
    await h.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    await h.graph.invoke(new Command({ resume: { choice: "send" } }), config);
    let approvalId: string | undefined;
    for await (const s of h.graph.getStateHistory(config)) {
      if (s.tasks.some((t) => t.name === "human_review" && t.interrupts.length > 0))
        approvalId = s.config.configurable?.checkpoint_id;
    }
    if (!approvalId) throw new Error("no approval checkpoint in the history");
    const fork = await h.graph.updateState(
      { configurable: { thread_id: threadId, checkpoint_id: approvalId } },
      { reason: "second look" },
    );
    await h.graph.invoke(new Command({ resume: { decision: "reject", note: "x" } }), fork);
    return { threadId, config, approvalId, forkId: fork.configurable?.checkpoint_id as string };
  }

  const all = (threadId: string) => getThreadHistory(deps, { threadId, before: null, limit: 200 });
  const byId = (entries: HistoryCheckpoint[]) => new Map(entries.map((e) => [e.checkpointId, e]));

  it("labels the head's chain main and the abandoned approve run branch-1 after a fork", async () => {
    const { threadId, config, approvalId, forkId } = await approvedThenForkedToReject();
    const history = await all(threadId);
    const entries = history.checkpoints;
    const index = byId(entries);
    let snapshots = 0;
    for await (const _ of h.graph.getStateHistory(config)) snapshots += 1;
    expect(entries).toHaveLength(snapshots);
    expect(history.nextCursor).toBeNull();

    // The head is the newest checkpoint: the fork, paused at confirm_email.
    const head = entries[0]!;
    expect(history.headCheckpointId).toBe(head.checkpointId);
    expect(entries.filter((e) => e.isHead)).toEqual([head]);
    expect(head).toMatchObject({ branch: "main", pausedForHuman: true, interruptCount: 1, childCount: 0 });
    expect(entries.filter((e) => e.pausedForHuman)).toEqual([head]);

    expect(index.get(approvalId)).toMatchObject({
      branch: "main",
      childCount: 2,
      interruptCount: 1,
      pausedForHuman: false,
      writtenBy: { kind: "nodes", nodes: ["check_policy"] },
    });
    expect(index.get(forkId)).toMatchObject({
      parentCheckpointId: approvalId,
      source: "update",
      writtenBy: { kind: "update" },
      branch: "main",
    });
    const root = entries[entries.length - 1]!;
    expect(root).toMatchObject({ parentCheckpointId: null, source: "input", writtenBy: { kind: "input" } });
    expect(entries[entries.length - 2]?.writtenBy).toEqual({ kind: "nodes", nodes: ["__start__"] });

    // Both children of the decision: human_review wrote them, one per branch.
    const reviewed = entries.filter(
      (e) => e.writtenBy.kind === "nodes" && e.writtenBy.nodes.includes("human_review"),
    );
    expect(reviewed.map((e) => [e.parentCheckpointId, e.branch])).toEqual([
      [forkId, "main"],
      [approvalId, "branch-1"],
    ]);

    // branch-1 is one chain hanging off the approval checkpoint; main runs from the root to the head.
    expect(history.branches).toEqual([
      {
        label: "main",
        leafCheckpointId: head.checkpointId,
        forkedFromCheckpointId: null,
        size: expect.any(Number),
      },
      {
        label: "branch-1",
        leafCheckpointId: expect.any(String),
        forkedFromCheckpointId: approvalId,
        size: 6,
      },
    ]);
    const branch1 = entries.filter((e) => e.branch === "branch-1");
    expect(branch1).toHaveLength(6);
    for (const e of branch1) {
      let at: HistoryCheckpoint | undefined = e;
      while (at?.branch === "branch-1") at = index.get(at.parentCheckpointId ?? "");
      expect(at?.checkpointId).toBe(approvalId);
    }
    let mainLength = 0;
    for (let at: HistoryCheckpoint | undefined = head; at; at = index.get(at.parentCheckpointId ?? "")) {
      expect(at.branch).toBe("main");
      mainLength += 1;
    }
    expect(mainLength).toBe(entries.length - 6);
    expect(history.branches[0]?.size).toBe(mainLength);
    expect(branch1.map((e) => e.writtenBy)).toContainEqual({ kind: "nodes", nodes: ["send_email"] });
  });

  it("pages newest first with before and limit: no overlap, no gap, same labels", async () => {
    const { threadId } = await approvedThenForkedToReject();
    const full = await all(threadId);
    const pages: HistoryCheckpoint[][] = [];
    let before: string | null = null;
    do {
      const page = await getThreadHistory(deps, { threadId, before, limit: 4 });
      expect(page.checkpoints.length).toBeLessThanOrEqual(4);
      pages.push(page.checkpoints);
      before = page.nextCursor;
    } while (before !== null && pages.length < 20);
    expect(pages.length).toBe(Math.ceil(full.checkpoints.length / 4));
    expect(pages.flat()).toEqual(full.checkpoints);
    expect(new Set(pages.flat().map((e) => e.checkpointId)).size).toBe(full.checkpoints.length);
  });

  it("reports a thread paused for a human, also after an answer it did not accept", async () => {
    const { threadId, config } = await start("Refund for ORD-1010 please, the shoes hurt.");
    const paused = await all(threadId);
    expect(paused.checkpoints[0]).toMatchObject({ isHead: true, pausedForHuman: true, interruptCount: 1 });

    // An approval above the requested amount is not accepted: the node asks again from the same checkpoint.
    await h.graph.invoke(
      new Command({ resume: { decision: "approve_partial", amountCents: 999_999 } }),
      config,
    );
    const askedAgain = await all(threadId);
    expect(askedAgain.checkpoints).toHaveLength(paused.checkpoints.length);
    expect(askedAgain.checkpoints[0]).toMatchObject({
      checkpointId: paused.checkpoints[0]?.checkpointId,
      pausedForHuman: true,
    });

    await h.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    const moved = await all(threadId);
    expect(moved.checkpoints.filter((e) => e.pausedForHuman).map((e) => e.isHead)).toEqual([true]);
    expect(moved.branches.map((b) => b.label)).toEqual(["main"]);
  });

  it("refuses an unknown thread (404) and a cursor that is not one of the thread's checkpoints (400)", async () => {
    await expect(all(`missing-${randomUUID()}`)).rejects.toMatchObject({
      code: "not_found:thread",
      status: 404,
    });

    const other = await start("Do you ship to Norway?");
    const otherHead = (await all(other.threadId)).headCheckpointId!;
    const { threadId } = await start("Refund ORD-1006 please, I changed my mind.");
    await expect(getThreadHistory(deps, { threadId, before: otherHead, limit: 10 })).rejects.toMatchObject({
      code: "bad_request:history",
      status: 400,
      message: expect.stringContaining("is not a checkpoint of thread"),
    });

    const empty = await createThread({
      db: h.database.db,
      title: "new",
      customerMessage: "hi",
      orderRef: null,
    });
    expect(await all(empty.id)).toEqual({
      threadId: empty.id,
      status: "idle",
      headCheckpointId: null,
      branches: [],
      checkpoints: [],
      nextCursor: null,
    });
  });
});
