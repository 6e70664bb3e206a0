import { join } from "node:path";
import { countPoolStatements } from "@/e2e/bench/measure";
import { createTestDatabase } from "@/e2e/support/pg";
import { migrateDatabase } from "@/lib/db/migrate";
import { type Database, openPostgres } from "@/lib/db/open";
import type { LoggedEvent } from "@/lib/db/queries/events";
import { publishEvents, wakeThread } from "./event-bus";
import { sseBody, tailEvents } from "./stream";

/*
 * The tail reads the log at the start and whenever what it heard does not follow on — not after every batch this
 * process published itself (that was one extra read per flush of every run: about a tenth of a ticket's statements).
 */

let database: Database;
let drop: () => Promise<void>;
let counter: { statements: number };

beforeAll(async () => {
  const db = await createTestDatabase("tail");
  drop = db.drop;
  const setup = openPostgres(db.url, { max: 1 });
  await migrateDatabase(setup, join(process.cwd(), "drizzle"));
  await setup.close();
  database = openPostgres(db.url, { max: 2 });
  counter = countPoolStatements(database.pool!);
});
afterAll(async () => {
  await database?.close();
  await drop?.();
});

const event = (seq: number, type = "TEXT_MESSAGE_CONTENT"): LoggedEvent => ({
  seq,
  runId: "run-1",
  type,
  event: { type },
});

async function until(check: () => boolean) {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

it("follows published batches without reading the log again, and reads it when another instance announces", async () => {
  const threadId = crypto.randomUUID();
  const abort = new AbortController();
  const seen: number[] = [];
  const before = counter.statements;
  const tail = (async () => {
    for await (const e of tailEvents({
      db: database.db,
      threadId,
      afterSeq: 0,
      signal: abort.signal,
      untilRunId: "run-1",
      idle: async () => false,
      idleMs: 60_000,
    })) {
      seen.push(e.seq);
    }
  })();
  await until(() => counter.statements > before);
  // Let the first read come back with nothing before anything is published.
  await new Promise((r) => setTimeout(r, 50));
  const afterFirstRead = counter.statements;
  expect(afterFirstRead - before).toBe(1);
  publishEvents(threadId, [event(1, "RUN_STARTED"), event(2)]);
  await until(() => seen.length === 2);
  publishEvents(threadId, [event(3)]);
  await until(() => seen.length === 3);
  await new Promise((r) => setTimeout(r, 50));
  expect(counter.statements).toBe(afterFirstRead);
  // Another instance appended (the listener's wake-up carries no events): the log is read.
  wakeThread(threadId);
  await until(() => counter.statements === afterFirstRead + 1);
  publishEvents(threadId, [event(4, "RUN_FINISHED")]);
  await tail;
  expect(seen).toEqual([1, 2, 3, 4]);
  abort.abort();
});

it("writes each batch it hears as one SSE chunk (a run's burst is one socket write), events still one per block", async () => {
  const threadId = crypto.randomUUID();
  const abort = new AbortController();
  const body = sseBody(
    { db: database.db, threadId, afterSeq: 0, untilRunId: "run-1", idle: async () => false, idleMs: 60_000 },
    abort.signal,
  );
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  const read = (async () => {
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(decoder.decode(r.value));
  })();
  const before = counter.statements;
  await until(() => counter.statements > before);
  await new Promise((r) => setTimeout(r, 50));
  publishEvents(threadId, [event(1, "RUN_STARTED"), event(2), event(3), event(4)]);
  await until(() => chunks.some((c) => c.includes("data:")));
  publishEvents(threadId, [event(5), event(6, "RUN_FINISHED"), event(7, "RUN_STARTED")]);
  await read;
  const eventChunks = chunks.filter((c) => c.includes("data:"));
  expect(eventChunks.map((c) => c.match(/^data: /gm)?.length)).toEqual([4, 2]);
  // Every event keeps its own block and id, in order; the tail stops at the run's RUN_FINISHED.
  expect(eventChunks.join("").match(/^id: \d+$/gm)).toEqual([
    "id: 1",
    "id: 2",
    "id: 3",
    "id: 4",
    "id: 5",
    "id: 6",
  ]);
  abort.abort();
});

/** A tail opened for a run claimed at seq 7 that this process is about to start (`fresh`), already subscribed. */
function freshTail(threadId: string, signal: AbortSignal) {
  const tail = tailEvents({
    db: database.db,
    threadId,
    afterSeq: 7,
    signal,
    untilRunId: "run-1",
    fresh: true,
    idle: async () => false,
    idleMs: 60_000,
  });
  // Its first step subscribes, before the run publishes anything.
  return { tail, first: tail.next() };
}

it("follows a run it was opened for before it started (`fresh`) without reading the log, and reads it on a gap", async () => {
  const threadId = crypto.randomUUID();
  const abort = new AbortController();
  const seen: number[] = [];
  const before = counter.statements;
  const { tail, first } = freshTail(threadId, abort.signal);
  publishEvents(threadId, [event(8, "RUN_STARTED"), event(9)]);
  const collect = (async () => {
    for (let r = await first; !r.done; r = await tail.next()) seen.push(r.value.seq);
  })();
  await until(() => seen.length === 2);
  publishEvents(threadId, [event(10), event(11, "RUN_FINISHED")]);
  await collect;
  expect(seen).toEqual([8, 9, 10, 11]);
  expect(counter.statements).toBe(before);
  abort.abort();
});

it("still reads the log when a fresh run's first batch heard does not follow on", async () => {
  const threadId = crypto.randomUUID();
  const abort = new AbortController();
  const before = counter.statements;
  const { first } = freshTail(threadId, abort.signal);
  // 8 was published before the tail subscribed: what it hears starts at 9, so the log must have 8.
  publishEvents(threadId, [event(9)]);
  await until(() => counter.statements > before);
  abort.abort();
  publishEvents(threadId, [event(10)]);
  expect((await first).done).toBe(true);
});
