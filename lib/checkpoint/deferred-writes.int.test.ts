import { randomUUID } from "node:crypto";
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { buildApprovalGraph } from "@/e2e/support/approval-graph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { CountingSqlClient } from "@/e2e/support/counting-sql-client";
import { TracedCheckpointSaver } from "@/lib/checkpoint/traced-sql";
import type { SqlClient } from "@/lib/db/sql-client";
import { threadKey } from "@/lib/db/vault";
import { DrizzleCheckpointSaver } from "./saver";
import { batcherFor, WRITE_BATCH_NAME } from "./write-batch";

/*
 * A run's checkpoint writes, queued instead of waited for one by one (`defer_writes`, issue 31). LangGraph calls
 * each `put` only once the previous one resolved, so a run whose steps outpace the database sent one statement per
 * checkpoint. Queued, they share statements, every one is stored once the run's end has settled them, a read of the
 * thread waits for them, and a failed one is reported to the run's end, once. On both databases.
 */
const backends: Backend[] = ["postgres", "pglite"];

const State = Annotation.Root({ n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });

/** Eight steps in a row, each adding 1: nine checkpoints and eight tasks' writes per run. */
function chain(checkpointer: DrizzleCheckpointSaver) {
  const names = Array.from({ length: 8 }, (_, i) => `step_${i}`);
  let graph = new StateGraph(State) as unknown as StateGraph<typeof State.spec, unknown, unknown, string>;
  for (const name of names) graph = graph.addNode(name, () => ({ n: 1 })) as typeof graph;
  graph = graph.addEdge(START, names[0]!) as typeof graph;
  for (let i = 1; i < names.length; i++) graph = graph.addEdge(names[i - 1]!, names[i]!) as typeof graph;
  graph = graph.addEdge(names.at(-1)!, END) as typeof graph;
  return graph.compile({ checkpointer });
}

describe.each(backends)("a run's queued checkpoint writes, on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let sql: SqlClient;
  beforeAll(async () => {
    backend = await openBackend(kind);
    sql = backend.database.sql;
  });
  afterAll(() => backend?.close());

  const stored = async (threadId: string) =>
    Number(
      (
        await sql.query<{ n: string | number }>(
          `SELECT count(*) AS n FROM "checkpoint"."checkpoints" WHERE thread_id = $1`,
          [threadId],
        )
      )[0]?.n,
    );

  /** Write statements one run of the chain sends, and the thread it ran on. */
  async function run(deferred: boolean): Promise<{ writes: number; threadId: string; n: number }> {
    const counting = new CountingSqlClient(sql);
    const saver = new DrizzleCheckpointSaver(counting);
    const threadId = randomUUID();
    const out = await chain(saver).invoke(
      { n: 0 },
      { configurable: { thread_id: threadId, ...(deferred ? { defer_writes: true } : {}) } },
    );
    await batcherFor(counting).settled(threadId, true);
    return { writes: counting.byName[WRITE_BATCH_NAME] ?? 0, threadId, n: out.n };
  }

  it("share statements, and every checkpoint is stored once the run's end has settled them", async () => {
    const waited = await run(false);
    const queued = await run(true);
    expect(queued.n).toBe(8);
    expect(await stored(queued.threadId)).toBe(await stored(waited.threadId));
    expect(await stored(queued.threadId)).toBe(10);
    // One statement per checkpoint (and more for the writes) when each put is waited for; far fewer queued.
    expect(waited.writes).toBeGreaterThanOrEqual(10);
    expect(queued.writes).toBeLessThanOrEqual(waited.writes / 2);
  });

  it("a read of the thread waits for what was queued", async () => {
    const saver = new DrizzleCheckpointSaver(sql);
    const threadId = randomUUID();
    await chain(saver).invoke({ n: 0 }, { configurable: { thread_id: threadId, defer_writes: true } });
    // No settling by the caller: the read itself waits for the queued writes.
    const tuple = await saver.getTuple({ configurable: { thread_id: threadId } });
    expect(tuple?.checkpoint.channel_values).toMatchObject({ n: 8 });
    expect(tuple?.metadata?.step).toBe(8);
  });

  it("a queued write that fails is reported to the run's end, once, and a reader only waits", async () => {
    const batcher = batcherFor(sql);
    const threadId = randomUUID();
    batcher.accept({
      kind: "checkpoint",
      threadId,
      ns: "",
      checkpointId: "cp-bad",
      parentId: null,
      // Not JSON: the database refuses it.
      checkpoint: "{not json",
      metadata: "{}",
      blobs: [],
    });
    await expect(batcher.settled(threadId)).resolves.toBeUndefined();
    await expect(batcher.settled(threadId, true)).rejects.toThrow();
    await expect(batcher.settled(threadId, true)).resolves.toBeUndefined();
    expect(await stored(threadId)).toBe(0);
  });

  it("a reader waits only for what was queued before it asked, not for a run that keeps writing", async () => {
    const batcher = batcherFor(sql);
    const threadId = randomUUID();
    const put = (id: string) =>
      batcher.accept({
        kind: "checkpoint",
        threadId,
        ns: "",
        checkpointId: id,
        parentId: null,
        checkpoint: JSON.stringify({ v: 4, id, channel_versions: {} }),
        metadata: "{}",
        blobs: [],
      });
    put("cp-00");
    let n = 0;
    // A run queuing one more write every time a statement commits, 50 times.
    const keep = setInterval(() => {
      if (n < 50) put(`cp-${String(++n).padStart(2, "0")}`);
    }, 1);
    await batcher.settled(threadId);
    const seen = n;
    clearInterval(keep);
    expect(seen).toBeLessThan(50);
    expect(await stored(threadId)).toBeGreaterThanOrEqual(1);
    await batcher.settled(threadId, true);
    expect(await stored(threadId)).toBe(n + 1);
  });

  it("the traced saver writes through the client's own batcher, the one the run's events use", async () => {
    const counting = new CountingSqlClient(sql);
    const saver = new TracedCheckpointSaver(counting);
    const threadId = randomUUID();
    const events = batcherFor(counting);
    // Whether the thread's values are sealed is known before (as for a run's thread: looked up once, then kept).
    await threadKey(counting, threadId);
    const checkpoint = (id: string) => ({
      v: 4,
      id,
      ts: new Date().toISOString(),
      channel_values: {},
      channel_versions: {},
      versions_seen: {},
    });
    // Written in the same turn of the event loop, all three go out together — unless the saver has a batcher of its
    // own (it once took the one of the traced client wrapping this one), which sends its put alone.
    const first = events.write({
      kind: "checkpoint",
      threadId,
      ns: "",
      checkpointId: "cp-0",
      parentId: null,
      checkpoint: JSON.stringify(checkpoint("cp-0")),
      metadata: "{}",
      blobs: [],
    });
    const put = saver.put(
      { configurable: { thread_id: threadId, checkpoint_ns: "" } },
      checkpoint("cp-1"),
      { source: "loop", step: 1, parents: {} },
      {},
    );
    const second = events.write({
      kind: "checkpoint",
      threadId,
      ns: "",
      checkpointId: "cp-2",
      parentId: null,
      checkpoint: JSON.stringify(checkpoint("cp-2")),
      metadata: "{}",
      blobs: [],
    });
    await Promise.all([first, put, second]);
    expect(counting.byName[WRITE_BATCH_NAME]).toBe(1);
    expect(await stored(threadId)).toBe(3);
  });

  /** Two reviews side by side, each asking a question, then a join: pending writes of several tasks at one head. */
  function parallel(checkpointer: DrizzleCheckpointSaver) {
    const Reviews = Annotation.Root({
      log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
    });
    return new StateGraph(Reviews)
      .addNode("intake", () => ({ log: ["intake"] }))
      .addNode("fraud_review", () => ({ log: [`fraud ${interrupt({ action: "fraud" }) as string}`] }))
      .addNode("data_review", () => ({ log: [`data ${interrupt({ action: "data" }) as string}`] }))
      .addNode("apply", (s) => ({ log: [`apply after ${s.log.length}`] }))
      .addEdge(START, "intake")
      .addEdge("intake", "fraud_review")
      .addEdge("intake", "data_review")
      .addEdge("fraud_review", "apply")
      .addEdge("data_review", "apply")
      .addEdge("apply", END)
      .compile({ checkpointer });
  }

  /** What a state snapshot says, as JSON (class instances and all). */
  const plain = (state: unknown) => JSON.parse(JSON.stringify(state)) as unknown;

  it("a run's end gets its head as the run wrote it — what the database holds — without reading it back", async () => {
    const counting = new CountingSqlClient(sql);
    const saver = new DrizzleCheckpointSaver(counting);
    const threadId = randomUUID();
    const graphs = [buildApprovalGraph(saver), parallel(saver)];
    for (const [g, graph] of graphs.entries()) {
      const thread = `${threadId}-${g}`;
      for (const runId of ["r1", "r2"]) {
        const run = { configurable: { thread_id: thread, hitl_run_id: runId, defer_writes: true } };
        // The first run starts the thread; the second answers every question it paused with.
        const asked = (await graph.getState({ configurable: { thread_id: thread } })).tasks.flatMap(
          (t) => t.interrupts,
        );
        const input =
          runId === "r1"
            ? g === 0
              ? { order: "A-1" }
              : {}
            : new Command({ resume: Object.fromEntries(asked.map((i) => [i.id as string, `yes ${i.id}`])) });
        expect(runId === "r1" || asked.length === g + 1).toBe(true);
        await graph.invoke(input as never, run);
        await batcherFor(counting).settled(thread, true);
        const before = counting.statements;
        const own = await graph.getState({ configurable: { thread_id: thread, hitl_head_of_run: runId } });
        expect(counting.statements, `${runId} of graph ${g}: no read`).toBe(before);
        const stored = await graph.getState({ configurable: { thread_id: thread } });
        expect(counting.statements).toBe(before + 1);
        expect(plain(own)).toEqual(plain(stored));
        // Once: asked again, the head is read.
        await graph.getState({ configurable: { thread_id: thread, hitl_head_of_run: runId } });
        expect(counting.statements).toBe(before + 2);
      }
    }
    // Both ran to their end with the answers.
    const end = await graphs[1]!.getState({ configurable: { thread_id: `${threadId}-1` } });
    expect(end.values.log).toContain("apply after 3");
    expect(end.next).toEqual([]);
  });

  it("a run that wrote beside what it read at its start (no new checkpoint) has its head read, and right", async () => {
    const counting = new CountingSqlClient(sql);
    const saver = new DrizzleCheckpointSaver(counting);
    const graph = buildApprovalGraph(saver);
    const thread = randomUUID();
    await graph.invoke({ order: "B-2" }, { configurable: { thread_id: thread } });
    await graph.invoke(new Command({ resume: "yes" }), { configurable: { thread_id: thread } });
    // Resumed again once finished: the run writes its answer against the head it read, and nothing else.
    const run = { configurable: { thread_id: thread, hitl_run_id: "again", defer_writes: true } };
    await graph.invoke(new Command({ resume: "again" }), run);
    await batcherFor(counting).settled(thread, true);
    const before = counting.statements;
    const own = await graph.getState({ configurable: { thread_id: thread, hitl_head_of_run: "again" } });
    expect(counting.statements).toBe(before + 1);
    expect(plain(own)).toEqual(plain(await graph.getState({ configurable: { thread_id: thread } })));
  });
});
