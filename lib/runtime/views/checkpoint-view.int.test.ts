import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import { openRefundHarness, type RefundHarness } from "@/e2e/support/refund-harness";
import { refundAgent } from "@/lib/agents/refund/agent";
import { refundGraphInput } from "@/lib/agents/refund/graph";
import { createThread } from "@/lib/db/queries/threads";
import { type CheckpointViewDeps, getCheckpointView } from "./checkpoint-view";
import { getThreadHistory } from "./history-view";

/* The real refund graph on our checkpointer (offline model, seeded demo orders) in a fresh Postgres database. */
describe("getCheckpointView on postgres", () => {
  let h: RefundHarness;
  let deps: CheckpointViewDeps;
  // ORD-1002 approved and emailed to the end, then forked at the approval checkpoint and rejected there.
  let threadId: string;
  let approvalId: string;
  let forkId: string;

  beforeAll(async () => {
    h = await openRefundHarness("postgres");
    deps = { db: h.database.db, sql: h.database.sql, graph: h.graph, agent: refundAgent };
    const customerMessage = "My headphones (ORD-1002) stopped working. I want a refund.";
    threadId = (await createThread({ db: h.database.db, title: "test", customerMessage, orderRef: null })).id;
    const config = { configurable: { thread_id: threadId } };
    await h.graph.invoke(refundGraphInput({ messageId: randomUUID(), customerMessage }), config);
    await h.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    await h.graph.invoke(new Command({ resume: { choice: "send" } }), config);
    for await (const s of h.graph.getStateHistory(config)) {
      if (s.tasks.some((t) => t.name === "human_review" && t.interrupts.length > 0))
        approvalId = s.config.configurable?.checkpoint_id as string;
    }
    const fork = await h.graph.updateState(
      { configurable: { thread_id: threadId, checkpoint_id: approvalId } },
      { reason: "second look" },
    );
    forkId = fork.configurable?.checkpoint_id as string;
    await h.graph.invoke(new Command({ resume: { decision: "reject", note: "x" } }), fork);
  });
  afterAll(async () => {
    await h?.close();
  });

  const view = (checkpointId: string, thread = threadId) =>
    getCheckpointView(deps, { threadId: thread, checkpointId });

  it("shows the refund_approval interrupt raised at the approval checkpoint and the diff against its parent", async () => {
    const v = await view(approvalId);
    expect(v.next).toEqual(["human_review"]);
    expect(v.metadata).toEqual({ step: 3, source: "loop", parents: {} });
    expect(v.interrupts).toHaveLength(1);
    const [raised] = v.interrupts;
    expect(raised).toMatchObject({ node: "human_review", action: "refund_approval", answered: true });
    expect(raised?.payload).toMatchObject({ requested: { amountCents: 24900, currency: "EUR" } });
    expect(raised?.raw).toBeUndefined();

    // What ran from here on the first branch: the operator's answer and human_review's decision.
    const written = v.pendingWrites.filter((w) => w.node === "human_review").map((w) => w.channel);
    expect(written).toEqual(expect.arrayContaining(["__interrupt__", "__resume__", "decision"]));
    expect(v.pendingWrites.find((w) => w.channel === "decision")?.value).toMatchObject({
      decision: "approve",
    });

    // check_policy produced this checkpoint: the diff shows its findings and nothing about messages.
    expect(v.diff?.changedKeys).toEqual({ added: [], changed: ["policy", "requested"], removed: [] });
    expect(v.diff?.delta).toMatchObject({ requested: [null, 24900], policy: [null, { autoApprove: false }] });
    expect(v.values).not.toHaveProperty("messages");
    expect(v.values).toMatchObject({ orderRef: "ORD-1002", decision: null });
    expect(v.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });

  it("diffs the fork against the approval checkpoint: only the edited key", async () => {
    const v = await view(forkId);
    expect(v.parentCheckpointId).toBe(approvalId);
    expect(v.metadata.source).toBe("update");
    expect(v.diff).toEqual({
      against: approvalId,
      delta: { reason: ["item is defective", "second look"] },
      changedKeys: { added: [], changed: ["reason"], removed: [] },
    });
  });

  it("shows approve at the end of the old branch and reject at the end of the fork", async () => {
    const history = await getThreadHistory(deps, { threadId, before: null, limit: 200 });
    const leaf = (label: string) => history.branches.find((b) => b.label === label)?.leafCheckpointId ?? "";

    const main = await view(leaf("main"));
    expect(main.values.decision).toMatchObject({ decision: "reject", note: "x" });
    expect(main.values.refund).toBeNull();
    expect(main.interrupts.map((i) => [i.action, i.answered])).toEqual([["confirm_email", false]]);
    // write_reply added the drafted reply: one message, in AG-UI form, matched by id rather than position.
    expect(main.diff?.changedKeys.changed).toEqual(["messages", "reply"]);
    const added = main.messages[main.messages.length - 1];
    expect(main.diff?.delta).toMatchObject({ messages: { _t: "a", [main.messages.length - 1]: [added] } });
    expect(added).toMatchObject({ role: "assistant", content: expect.stringContaining("rejected") });

    const old = await view(leaf("branch-1"));
    expect(old.values.decision).toMatchObject({ decision: "approve", amountCents: 24900 });
    expect(old.values.refund).toMatchObject({ orderId: "ORD-1002", amountCents: 24900 });
    expect(old.values.email).toMatchObject({ status: "queued" });
    expect(old.next).toEqual([]);
    expect(old.interrupts).toEqual([]);
  });

  it("has no diff for the first checkpoint", async () => {
    const history = await getThreadHistory(deps, { threadId, before: null, limit: 200 });
    const first = history.checkpoints[history.checkpoints.length - 1]!;
    const v = await view(first.checkpointId);
    expect(v).toMatchObject({
      parentCheckpointId: null,
      diff: null,
      metadata: { step: -1, source: "input" },
    });
    expect(v.next).toEqual(["__start__"]);
  });

  it("404s an unknown checkpoint, another thread's checkpoint, and an unknown thread", async () => {
    await expect(view("1f000000-0000-6000-8000-000000000000")).rejects.toMatchObject({
      code: "not_found:checkpoint",
      status: 404,
    });
    const other = await createThread({
      db: h.database.db,
      title: "other",
      customerMessage: "hi",
      orderRef: null,
    });
    await expect(view(approvalId, other.id)).rejects.toMatchObject({ code: "not_found:checkpoint" });
    await expect(view(approvalId, `missing-${randomUUID()}`)).rejects.toMatchObject({
      code: "not_found:thread",
      status: 404,
    });
  });
});
