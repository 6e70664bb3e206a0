import { randomUUID } from "node:crypto";
import { type Backend, openBackend } from "@/e2e/support/backends";
import { appendEvents } from "@/lib/db/queries/events";
import type { SqlClient } from "@/lib/db/sql-client";
import { type BatchItem, WriteBatcher } from "./write-batch";

/*
 * A run's events in the checkpointer's batched statement (issue 31: one round trip per super-step for the checkpoint,
 * its writes and the step's events), on both databases: events of a run its owner still holds are written with the
 * thread's `last_seq` moved; events of a run owned elsewhere write nothing, and say so, without failing what shares
 * their statement; a checkpoint and two runs' events that meet go out as one statement.
 */
const backends: Backend[] = ["postgres", "pglite"];

describe.each(backends)("events in the checkpointer's batch, on %s", (kind) => {
  let backend: Awaited<ReturnType<typeof openBackend>>;
  let sql: SqlClient;
  beforeAll(async () => {
    backend = await openBackend(kind);
    sql = backend.database.sql;
  });
  afterAll(() => backend?.close());

  /** A thread with a running run owned by `owner`. */
  async function running(owner: string): Promise<{ threadId: string; runId: string }> {
    const threadId = randomUUID();
    const runId = randomUUID();
    await sql.query(
      `INSERT INTO threads (id, title, customer_message, status) VALUES ($1, 't', 'm', 'running')`,
      [threadId],
    );
    await sql.query(
      `INSERT INTO runs (id, thread_id, kind, status, input, agent_key, owner, attempts)
       VALUES ($1, $2, 'input', 'running', '{}'::jsonb, 'refund@1', $3, 1)`,
      [runId, threadId, owner],
    );
    return { threadId, runId };
  }

  const eventsOf = (threadId: string, runId: string, owner: string, seqs: number[]): BatchItem => ({
    kind: "events",
    threadId,
    runId,
    owner,
    events: seqs.map((seq) => ({
      seq,
      type: "CUSTOM",
      event: JSON.stringify({ type: "CUSTOM", seq, text: "é\u2028" }),
    })),
  });

  const logged = async (threadId: string) => ({
    seqs: (
      await sql.query<{ seq: string | number }>("SELECT seq FROM events WHERE thread_id = $1 ORDER BY seq", [
        threadId,
      ])
    ).map((r) => Number(r.seq)),
    lastSeq: Number(
      (
        await sql.query<{ last_seq: string | number }>("SELECT last_seq FROM threads WHERE id = $1", [
          threadId,
        ])
      )[0]?.last_seq,
    ),
  });

  it("writes a held run's events and moves the thread's last_seq; a lost run's events write nothing", async () => {
    const mine = await running("me");
    const theirs = await running("someone-else");
    const batcher = new WriteBatcher(sql);
    const [written, refused] = await Promise.all([
      batcher.write(eventsOf(mine.threadId, mine.runId, "me", [1, 2, 3])),
      batcher.write(eventsOf(theirs.threadId, theirs.runId, "me", [1])),
    ]);
    expect(written).toBe(true);
    expect(refused).toBe(false);
    expect(await logged(mine.threadId)).toEqual({ seqs: [1, 2, 3], lastSeq: 3 });
    expect(await logged(theirs.threadId)).toEqual({ seqs: [], lastSeq: 0 });
    const [row] = await sql.query<{ event: { text: string } }>(
      "SELECT event FROM events WHERE thread_id = $1 AND seq = 2",
      [mine.threadId],
    );
    expect(row?.event.text).toBe("é\u2028");
  });

  const appends = {
    "the checkpointer's batch": (threadId: string, runId: string) =>
      new WriteBatcher(sql).write(eventsOf(threadId, runId, "me", [1, 2])),
    "appendEvents (the sink's path without a batcher)": (threadId: string, runId: string) =>
      appendEvents({
        db: backend.database.db,
        threadId,
        runId,
        owner: "me",
        batch: [1, 2].map((seq) => ({ seq, runId, type: "CUSTOM", event: { type: "CUSTOM", seq } })),
      }),
  };
  it.each(Object.entries(appends))(
    "an append through %s changes no column an index of threads holds (updated_at included): the row is updated in place",
    async (_, append) => {
      // Every column some index of threads holds; its indexes are on plain columns (no expression or predicate that
      // would name others), which the first query checks.
      const [shapes] = await sql.query<{ n: string | number }>(
        `SELECT count(*) AS n FROM pg_index WHERE indrelid = 'threads'::regclass
         AND (indexprs IS NOT NULL OR indpred IS NOT NULL)`,
      );
      expect(Number(shapes?.n)).toBe(0);
      const indexed = await sql.query<{ name: string }>(
        `SELECT DISTINCT a.attname AS name FROM pg_index i
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey::int2[])
         WHERE i.indrelid = 'threads'::regclass`,
      );
      const columns = indexed.map((r) => r.name).sort();
      expect(columns).toEqual(expect.arrayContaining(["id", "status", "updated_at", "search_tsv"]));
      const mine = await running("me");
      const snapshot = async () =>
        (
          await sql.query<Record<string, unknown>>(
            `SELECT ${columns.map((c) => `${c}::text`).join(", ")} FROM threads WHERE id = $1`,
            [mine.threadId],
          )
        )[0];
      const before = await snapshot();
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await append(mine.threadId, mine.runId)).toBe(true);
      expect(await snapshot()).toEqual(before);
      expect(await logged(mine.threadId)).toEqual({ seqs: [1, 2], lastSeq: 2 });
    },
  );

  it("a checkpoint and two runs' events that meet go out in one statement", async () => {
    const a = await running("me");
    const b = await running("me");
    let statements = 0;
    const counting: SqlClient = {
      ...sql,
      query: (text, params, name) => {
        statements += 1;
        return sql.query(text, params, name);
      },
    };
    const batcher = new WriteBatcher(counting);
    const results = await Promise.all([
      batcher.write({
        kind: "checkpoint",
        threadId: a.threadId,
        ns: "",
        checkpointId: "cp-1",
        parentId: null,
        checkpoint: JSON.stringify({ v: 4, id: "cp-1", channel_versions: {} }),
        metadata: "{}",
        blobs: [],
      }),
      batcher.write(eventsOf(a.threadId, a.runId, "me", [1, 2])),
      batcher.write(eventsOf(b.threadId, b.runId, "me", [1])),
    ]);
    expect(results).toEqual([true, true, true]);
    expect(statements).toBe(1);
    expect(await logged(a.threadId)).toEqual({ seqs: [1, 2], lastSeq: 2 });
    expect(await logged(b.threadId)).toEqual({ seqs: [1], lastSeq: 1 });
    const [cp] = await sql.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM "checkpoint"."checkpoints" WHERE thread_id = $1`,
      [a.threadId],
    );
    expect(Number(cp?.n)).toBe(1);
  });

  it("a sequence number used twice fails only its own events, not the checkpoint beside them", async () => {
    const a = await running("me");
    const batcher = new WriteBatcher(sql);
    await batcher.write(eventsOf(a.threadId, a.runId, "me", [1]));
    const [checkpoint, again] = await Promise.allSettled([
      batcher.write({
        kind: "checkpoint",
        threadId: a.threadId,
        ns: "",
        checkpointId: "cp-2",
        parentId: null,
        checkpoint: JSON.stringify({ v: 4, id: "cp-2", channel_versions: {} }),
        metadata: "{}",
        blobs: [],
      }),
      batcher.write(eventsOf(a.threadId, a.runId, "me", [1])),
    ]);
    expect(checkpoint).toEqual({ status: "fulfilled", value: true });
    expect(again.status).toBe("rejected");
    expect(await logged(a.threadId)).toEqual({ seqs: [1], lastSeq: 1 });
  });
  it("a batch whose commit answer was lost (a failover, a pooler restart) is not sent again: each item fails with the fault, each event is stored once", async () => {
    const a = await running("me");
    const b = await running("me");
    let statements = 0;
    // The database commits the batch, then the connection dies before its answer arrives.
    const lossy: SqlClient = {
      async query<R>(text: string, params?: readonly unknown[], name?: string): Promise<R[]> {
        statements += 1;
        const rows = await sql.query<R>(text, params, name);
        if (statements === 1) throw Object.assign(new Error("Connection terminated unexpectedly"), { rows });
        return rows;
      },
    };
    const batcher = new WriteBatcher(lossy);
    const results = await Promise.allSettled([
      batcher.write(eventsOf(a.threadId, a.runId, "me", [1, 2])),
      batcher.write(eventsOf(b.threadId, b.runId, "me", [1])),
    ]);
    // Sent once: a second try of what may have committed would write the events twice, or fail on their seq.
    expect(statements).toBe(1);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      expect(((result as PromiseRejectedResult).reason as Error).message).toBe(
        "Connection terminated unexpectedly",
      );
    }
    expect(await logged(a.threadId)).toEqual({ seqs: [1, 2], lastSeq: 2 });
    expect(await logged(b.threadId)).toEqual({ seqs: [1], lastSeq: 1 });
  });
});
