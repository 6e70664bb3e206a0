import { Command, MemorySaver } from "@langchain/langgraph";
import {
  type BaseCheckpointSaver,
  compareWritesSortKeys,
  emptyCheckpoint,
  uuid6,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import { buildApprovalGraph } from "@/e2e/support/approval-graph";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { listCheckpointHistory } from "./history";
import { DrizzleCheckpointSaver } from "./saver";

const backends: Backend[] = ["postgres", "pglite"];

describe.each(backends)("DrizzleCheckpointSaver on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let saver: DrizzleCheckpointSaver;

  beforeAll(async () => {
    // On Postgres the database's default collation is ICU en-US ("a" < "B"), so byte order must come from the schema.
    backend = await openBackend(kind, { icuLocale: "en-US" });
    saver = new DrizzleCheckpointSaver(backend.database.sql);
  });
  afterAll(async () => {
    await backend?.close();
  });

  const thread = () => ({ configurable: { thread_id: `t-${uuid6(1)}` } });

  it("keeps two forks of one paused checkpoint apart (langgraphjs issue 1812)", async () => {
    const graph = buildApprovalGraph(saver);
    const config = thread();
    await graph.invoke({ order: "A-100" }, config);
    const paused = await graph.getState(config);
    expect(paused.tasks.flatMap((t) => t.interrupts)).toHaveLength(1);

    // Fork the paused checkpoint twice, then answer each branch differently.
    const forkA = await graph.updateState(paused.config, { note: "branch A" });
    const forkB = await graph.updateState(paused.config, { note: "branch B" });
    await graph.invoke(new Command({ resume: "approved" }), forkA);
    const endA = (await graph.getState(config)).config;
    await graph.invoke(new Command({ resume: "rejected" }), forkB);
    const endB = (await graph.getState(config)).config;

    const stateA = await graph.getState(endA);
    const stateB = await graph.getState(endB);
    expect(stateA.values.decision).toBe("approved");
    expect(stateA.values.note).toBe("branch A");
    expect(stateA.values.log).toEqual([
      "intake A-100",
      "review approved",
      "decided approved",
      "reply approved (branch A)",
    ]);
    expect(stateB.values.decision).toBe("rejected");
    expect(stateB.values.note).toBe("branch B");
    expect(stateB.values.log).toEqual([
      "intake A-100",
      "review rejected",
      "decided rejected",
      "reply rejected (branch B)",
    ]);
    // And the paused checkpoint itself is unchanged.
    expect((await graph.getState(paused.config)).values.decision).toBe("");
  });

  it("resumes, lists history and forks from a checkpoint found in it", async () => {
    const graph = buildApprovalGraph(saver);
    const config = thread();
    await graph.invoke({ order: "B-7" }, config);
    await graph.invoke(new Command({ resume: "approved" }), config);
    expect((await graph.getState(config)).values.decision).toBe("approved");

    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const atApproval = history.find((s) => s.tasks.some((t) => t.interrupts.length > 0));
    expect(atApproval, "the paused checkpoint is in the history").toBeDefined();
    expect(atApproval?.next).toEqual(["review"]);

    // Re-invoking that checkpoint would replay the recorded answer; a fork from it asks again.
    const fork = await graph.updateState(atApproval!.config, { note: "second look" });
    await graph.invoke(new Command({ resume: "rejected" }), fork);
    const latest = await graph.getState(config);
    expect(latest.values.decision).toBe("rejected");
    expect(latest.values.log).toEqual([
      "intake B-7",
      "review rejected",
      "decided rejected",
      "reply rejected (second look)",
    ]);

    // The metadata-only history shows the branch point: two children under the approval checkpoint.
    const threadId = config.configurable.thread_id;
    const page = await listCheckpointHistory({ sql: backend.database.sql, threadId, limit: 50 });
    const forkPoint = page.entries.find(
      (e) => e.checkpointId === atApproval!.config.configurable?.checkpoint_id,
    );
    expect(forkPoint?.childCount).toBe(2);
    expect(forkPoint?.interruptCount).toBe(1);
    expect(forkPoint?.pendingInterrupts).toBe(false);
    expect(forkPoint?.writes.map((w) => w.node)).toContain("review");
    // Who produced each checkpoint comes from its parent's writes: review ran once on each branch.
    expect(
      page.entries.filter((e) => e.writtenBy.includes("review")).map((e) => e.parentCheckpointId),
    ).toEqual([fork.configurable?.checkpoint_id, forkPoint?.checkpointId]);
    expect(page.entries.find((e) => e.source === "update")?.writtenBy).toEqual([]);
    expect(page.entries.length).toBe(history.length + 4);
    // Newest first, paged with a cursor, no overlap.
    const first = await listCheckpointHistory({ sql: backend.database.sql, threadId, limit: 3 });
    const second = await listCheckpointHistory({
      sql: backend.database.sql,
      threadId,
      limit: 3,
      before: first.nextCursor,
    });
    expect(first.entries.map((e) => e.checkpointId)).toEqual(
      page.entries.slice(0, 3).map((e) => e.checkpointId),
    );
    expect(second.entries.map((e) => e.checkpointId)).toEqual(
      page.entries.slice(3, 6).map((e) => e.checkpointId),
    );
  });

  it("stores no row for a channel a checkpoint leaves empty, and reads every state as LangGraph's own saver does", async () => {
    const graph = buildApprovalGraph(saver);
    const reference = buildApprovalGraph(new MemorySaver());
    const config = thread();
    for (const g of [graph, reference]) {
      await g.invoke({ order: "E-1" }, config);
      await g.invoke(new Command({ resume: "approved" }), config);
    }
    const threadId = config.configurable.thread_id;
    const count = async (text: string) =>
      Number((await backend.database.sql.query<{ n: string | number }>(text, [threadId]))[0]?.n);
    // The graph does clear channels (the start channel and each node's trigger once consumed): their versions are
    // in the checkpoints, and no row stands for them.
    const referenced = await count(
      `SELECT count(DISTINCT (v.key, v.value)) AS n FROM "checkpoint"."checkpoints" cp,
         jsonb_each_text(cp.checkpoint -> 'channel_versions') v WHERE cp.thread_id = $1`,
    );
    const rows = await count(
      `SELECT count(*) AS n FROM "checkpoint"."checkpoint_blobs" WHERE thread_id = $1`,
    );
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThan(referenced);
    expect(
      await count(
        `SELECT count(*) AS n FROM "checkpoint"."checkpoint_blobs" WHERE thread_id = $1 AND (type = 'empty' OR blob IS NULL)`,
      ),
    ).toBe(0);
    // Every checkpoint reads back with the values, next nodes, step and pending interrupts LangGraph's in-memory saver
    // gives, and the latest with the same channel versions.
    const states = async (g: typeof graph) => {
      const out = [];
      for await (const s of g.getStateHistory(config)) {
        out.push({
          values: s.values,
          next: s.next,
          step: s.metadata?.step,
          tasks: s.tasks.map((t) => ({ name: t.name, interrupts: t.interrupts.map((i) => i.value) })),
        });
      }
      return out;
    };
    const ours = await states(graph);
    expect(ours.length).toBeGreaterThan(4);
    expect(ours).toEqual(await states(reference));
    const versions = async (cp: BaseCheckpointSaver) =>
      Object.keys((await cp.getTuple(config))?.checkpoint.channel_versions ?? {}).sort();
    expect(await versions(saver)).toEqual(await versions(reference.checkpointer as BaseCheckpointSaver));
  });

  it("reports a pending interrupt in the metadata-only history", async () => {
    const graph = buildApprovalGraph(saver);
    const config = thread();
    await graph.invoke({ order: "C-1" }, config);
    const page = await listCheckpointHistory({
      sql: backend.database.sql,
      threadId: config.configurable.thread_id,
    });
    expect(page.entries[0]?.pendingInterrupts).toBe(true);
    expect(page.entries.filter((e) => e.pendingInterrupts)).toHaveLength(1);
    expect(page.nextCursor).toBeNull();
  });

  it("returns pending writes ordered by (task_path, task_id, idx) in byte order", async () => {
    const config = await saver.put(
      thread(),
      {
        v: 4,
        id: uuid6(1),
        ts: new Date().toISOString(),
        channel_values: {},
        channel_versions: {},
        versions_seen: {},
      },
      { source: "loop", step: 0, parents: {} },
      {},
    );
    // Stored in an order unlike the expected one; "B" < "a" and "z" < "é" by code point, not in en-US.
    const batches: [string, string, string][] = [
      ["~__pregel_pull, é", "t1", "e-acute"],
      ["~__pregel_pull, a", "t2", "lower-a"],
      ["~__pregel_pull, z", "t3", "z"],
      ["~__pregel_pull, B", "t4", "upper-b"],
      ["~__pregel_pull, a", "t0", "lower-a-first-task"],
      ["", "t9", "no-path"],
    ];
    for (const [path, taskId, value] of batches)
      await saver.putWrites(
        config,
        [
          ["ch", value],
          ["ch2", value],
        ],
        taskId,
        path,
      );
    const tuple = await saver.getTuple(config);
    const expected = [...batches]
      .flatMap(([path, taskId, value]) => [
        { key: writesSortKey(path, taskId, 0), write: [taskId, "ch", value] },
        { key: writesSortKey(path, taskId, 1), write: [taskId, "ch2", value] },
      ])
      .sort((a, b) => compareWritesSortKeys(a.key, b.key))
      .map((x) => x.write);
    expect(tuple?.pendingWrites).toEqual(expected);
    expect(tuple?.pendingWrites?.map((w) => w[2]).filter((_, i) => i % 2 === 0)).toEqual([
      "no-path",
      "upper-b",
      "lower-a-first-task",
      "lower-a",
      "z",
      "e-acute",
    ]);
  });

  it("round-trips NUL characters in metadata, values and writes, and filters on them", async () => {
    const nul = "a\u0000b\u0001c";
    const checkpoint = {
      v: 4,
      id: uuid6(1),
      ts: new Date().toISOString(),
      channel_values: { text: nul, nested: { [nul]: [nul] } },
      channel_versions: { text: "1", nested: "1" },
      versions_seen: { [`node${nul}`]: { text: "1" } },
    };
    const metadata = {
      source: "input" as const,
      step: -1,
      parents: {},
      label: nul,
      [`key${nul}`]: "\u0001\u0002",
    };
    const config = await saver.put(thread(), checkpoint, metadata, { text: "1", nested: "1" });
    await saver.putWrites(config, [["text", nul]], "task-1", "~__pregel_pull, node");
    const tuple = await saver.getTuple(config);
    expect(tuple?.checkpoint).toEqual(checkpoint);
    expect(tuple?.metadata).toEqual(metadata);
    expect(tuple?.pendingWrites).toEqual([["task-1", "text", nul]]);
    const found = [];
    for await (const t of saver.list(config, { filter: { label: nul } })) found.push(t);
    expect(found).toHaveLength(1);
    const none = [];
    for await (const t of saver.list(config, { filter: { label: "a\u0000b" } })) none.push(t);
    expect(none).toHaveLength(0);
  });

  it("rejects a missing thread or a malformed config with a clear message", async () => {
    const cp = { v: 4, id: uuid6(1), ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} };
    const meta = { source: "input" as const, step: -1, parents: {} };
    await expect(saver.put({}, cp, meta, {})).rejects.toThrow(/put: config\.configurable is missing/);
    await expect(saver.put({ configurable: {} }, cp, meta, {})).rejects.toThrow(
      /put: .*thread_id is required/,
    );
    await expect(saver.put({ configurable: { thread_id: { id: 1 } } }, cp, meta, {})).rejects.toThrow(
      /thread_id must be a string, got object/,
    );
    await expect(saver.putWrites({ configurable: { thread_id: "x" } }, [["a", 1]], "t")).rejects.toThrow(
      /checkpoint_id is required/,
    );
    await expect(saver.getTuple({ configurable: { thread_id: ["x"] } })).rejects.toThrow(/got array/);
  });

  it("makes one statement per getTuple, and writes that meet on the way share one", async () => {
    const { CountingSqlClient } = await import("@/e2e/support/counting-sql-client");
    const counting = new CountingSqlClient(backend.database.sql);
    const counted = new DrizzleCheckpointSaver(counting);
    const calls = { getTuple: 0, put: 0, putWrites: 0, list: 0 };
    for (const method of ["getTuple", "put", "putWrites"] as const) {
      const original = counted[method].bind(counted) as (...args: unknown[]) => Promise<unknown>;
      (counted as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        calls[method] += 1;
        return original(...args);
      };
    }
    const countedGraph = buildApprovalGraph(counted);
    const config = thread();
    await countedGraph.invoke({ order: "D-1" }, config);
    await countedGraph.invoke(new Command({ resume: "approved" }), config);
    expect(calls.put).toBeGreaterThanOrEqual(5);
    const reads = counting.byName.cp_get_latest ?? 0;
    expect(reads + (counting.byName.cp_get_by_id ?? 0)).toBe(calls.getTuple);
    const writes = counting.byName.cp_write_batch ?? 0;
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThan(calls.put + calls.putWrites);
    expect((await countedGraph.getState(config)).values.decision).toBe("approved");

    // Ten writes made in one tick go out as one statement.
    const before = counting.byName.cp_write_batch ?? 0;
    const paused = (await counted.getTuple(config))!.config;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => counted.putWrites(paused, [[`ch${i}`, { i }]], `burst-${i}`)),
    );
    expect((counting.byName.cp_write_batch ?? 0) - before).toBe(1);
    const written = (await counted.getTuple(paused))!.pendingWrites!.filter(([task]) =>
      task.startsWith("burst-"),
    );
    expect(written.map(([task, channel, value]) => [task, channel, value])).toEqual(
      Array.from({ length: 10 }, (_, i) => [`burst-${i}`, `ch${i}`, { i }]),
    );
  });

  it("gives each write of a failed statement its own outcome", async () => {
    const config = thread();
    const cp = await saver.put(config, emptyCheckpoint(), { source: "input", step: -1, parents: {} }, {});
    const bad = { configurable: { ...cp.configurable, checkpoint_ns: "bad\u0000ns" } };
    const outcomes = await Promise.allSettled([
      saver.putWrites(cp, [["a", 1]], "first"),
      saver.putWrites(cp, [["b", 2]], "second"),
      saver.putWrites(bad, [["c", 3]], "third"),
      saver.putWrites(cp, [["d", 4]], "fourth"),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const tuple = await saver.getTuple(cp);
    expect(tuple!.pendingWrites!.map(([task, channel, value]) => [task, channel, value])).toEqual([
      ["first", "a", 1],
      ["fourth", "d", 4],
      ["second", "b", 2],
    ]);
  });

  it("applies writes made at once exactly as if each had been awaited in turn (generated)", async () => {
    const fc = (await import("fast-check")).default;
    const { INTERRUPT, RESUME, ERROR } = await import("@langchain/langgraph-checkpoint");
    const special = [INTERRUPT, RESUME, ERROR];
    const write = fc.record({
      task: fc.constantFrom("t1", "t2", "t3"),
      cp: fc.constantFrom(0, 1),
      writes: fc.oneof(
        fc.array(fc.tuple(fc.constantFrom("x", "y", "z"), fc.integer()), { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.constantFrom(...special), fc.integer()), { minLength: 1, maxLength: 2 }),
      ),
    });
    const op = fc.oneof(
      { arbitrary: write.map((w) => ({ kind: "writes" as const, ...w })), weight: 4 },
      { arbitrary: fc.record({ cp: fc.constantFrom(0, 1), note: fc.string() }), weight: 1 },
    );
    const run = async (ops: readonly unknown[], together: boolean) => {
      const config = thread();
      const base = emptyCheckpoint();
      const anchors = [
        await saver.put(config, { ...base, id: uuid6(-3) }, { source: "input", step: -1, parents: {} }, {}),
        await saver.put(config, { ...base, id: uuid6(-3) }, { source: "loop", step: 0, parents: {} }, {}),
      ];
      const calls = (ops as Op[]).map((o) => () => {
        const anchor = anchors[o.cp]!;
        if ("kind" in o) {
          // LangGraph never sends one special channel twice in a call.
          const writes = o.writes[0]![0].startsWith("__") ? [...new Map(o.writes).entries()] : o.writes;
          return saver.putWrites(anchor, writes as [string, number][], o.task);
        }
        const checkpoint = { ...base, id: anchor.configurable!.checkpoint_id as string };
        return saver.put(
          { configurable: { ...anchor.configurable, checkpoint_id: undefined } },
          checkpoint,
          { source: "update", step: o.cp, parents: {}, note: o.note } as never,
          {},
        );
      });
      if (together) await Promise.all(calls.map((call) => call()));
      else for (const call of calls) await call();
      return Promise.all(
        anchors.map(async (anchor) => {
          const tuple = (await saver.getTuple(anchor))!;
          return { metadata: tuple.metadata, writes: tuple.pendingWrites };
        }),
      );
    };
    type Op =
      | { kind: "writes"; task: string; cp: number; writes: [string, number][] }
      | { cp: number; note: string };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        expect(await run(ops, true)).toEqual(await run(ops, false));
      }),
      { numRuns: 40 },
    );
  });
});
