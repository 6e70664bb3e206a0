import { randomUUID } from "node:crypto";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { CountingSqlClient } from "@/e2e/support/counting-sql-client";
import type { SqlClient } from "@/lib/db/sql-client";
import { TracedCheckpointSaver } from "@/lib/observability/traced-sql";
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

  it("the traced saver writes through the client's own batcher, the one the run's events use", async () => {
    const counting = new CountingSqlClient(sql);
    const saver = new TracedCheckpointSaver(counting);
    const threadId = randomUUID();
    const events = batcherFor(counting);
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
});
