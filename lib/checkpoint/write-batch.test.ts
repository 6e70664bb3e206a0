import fc from "fast-check";
import { type BatchItem, batchParams } from "./write-batch";

/** What the statement does with the packed parameter: `substring($1 FROM off + 1 FOR len)`, NULL when len < 0. */
const slice = (packed: Buffer, off: number, len: number) =>
  len < 0 ? null : [...packed.subarray(off, off + len)];
const bytes = (value: Uint8Array | null) => (value ? [...value] : null);

const text = fc.string({ maxLength: 40 });
const checkpointItem: fc.Arbitrary<BatchItem> = fc.record({
  kind: fc.constant("checkpoint" as const),
  threadId: text,
  ns: text,
  checkpointId: text,
  parentId: fc.option(text, { nil: null }),
  checkpoint: fc.string({ unit: "grapheme", maxLength: 60 }),
  metadata: fc.string({ unit: "grapheme", maxLength: 60 }),
  blobs: fc.array(
    fc.record({
      channel: text,
      version: text,
      type: text,
      value: fc.option(fc.uint8Array({ maxLength: 48 }), { nil: null }),
    }),
    { maxLength: 6 },
  ),
});
const writesItem: fc.Arbitrary<BatchItem> = fc.record({
  kind: fc.constant("writes" as const),
  threadId: text,
  ns: text,
  checkpointId: text,
  taskId: text,
  taskPath: text,
  upsert: fc.boolean(),
  writes: fc.array(
    fc.record({
      idx: fc.integer({ min: -4, max: 50 }),
      channel: text,
      type: text,
      value: fc.uint8Array({ maxLength: 48 }),
    }),
    { maxLength: 6 },
  ),
});

const eventsItem: fc.Arbitrary<BatchItem> = fc.record({
  kind: fc.constant("events" as const),
  threadId: text,
  runId: text,
  owner: text,
  events: fc.array(
    fc.record({
      seq: fc.integer({ min: 1, max: 1_000_000 }),
      type: text,
      event: fc.string({ unit: "grapheme", maxLength: 60 }),
    }),
    { maxLength: 6 },
  ),
});
const anyItem = fc.oneof(checkpointItem, writesItem, eventsItem);

describe("batchParams", () => {
  it("gives every payload of every item back through the statement's slices, NULLs included", () => {
    fc.assert(
      fc.property(fc.array(anyItem, { maxLength: 10 }), (items) => {
        const p = batchParams(items);
        const packed = p[0] as Buffer;
        /** The parameter $n of the statement. */
        const col = (n: number) => p[n - 1] as unknown[];
        const checkpoints = items.filter((item) => item.kind === "checkpoint");
        const writes = items.flatMap((item) =>
          item.kind === "writes" ? item.writes.map((w) => ({ item, w })) : [],
        );
        const blobs = checkpoints.flatMap((item) => item.blobs.map((b) => ({ item, b })));
        const events = items.flatMap((item) =>
          item.kind === "events" ? item.events.map((e) => ({ item, e })) : [],
        );

        expect(col(2)).toEqual(checkpoints.map((c) => c.threadId));
        expect(col(4)).toEqual(checkpoints.map((c) => c.checkpointId));
        expect(col(5)).toEqual(checkpoints.map((c) => c.parentId));
        checkpoints.forEach((c, i) => {
          const json = slice(packed, col(6)[i] as number, col(7)[i] as number);
          const meta = slice(packed, col(8)[i] as number, col(9)[i] as number);
          expect(Buffer.from(json!).toString("utf8")).toBe(c.checkpoint);
          expect(Buffer.from(meta!).toString("utf8")).toBe(c.metadata);
        });

        expect(col(10)).toEqual(blobs.map(({ item }) => item.threadId));
        expect(col(12)).toEqual(blobs.map(({ b }) => b.channel));
        expect(col(13)).toEqual(blobs.map(({ b }) => b.version));
        blobs.forEach(({ b }, i) => {
          expect(slice(packed, col(15)[i] as number, col(16)[i] as number)).toEqual(bytes(b.value));
        });

        expect(col(17)).toEqual(writes.map(({ item }) => item.threadId));
        expect(col(20)).toEqual(writes.map(({ item }) => (item as { taskId: string }).taskId));
        expect(col(22)).toEqual(writes.map(({ w }) => w.idx));
        expect(col(27)).toEqual(writes.map(({ item }) => (item as { upsert: boolean }).upsert));
        writes.forEach(({ w }, i) => {
          expect(slice(packed, col(25)[i] as number, col(26)[i] as number)).toEqual(bytes(w.value));
        });

        expect(col(28)).toEqual(events.map(({ item }) => item.threadId));
        expect(col(29)).toEqual(events.map(({ e }) => e.seq));
        expect(col(30)).toEqual(events.map(({ item }) => (item as { runId: string }).runId));
        expect(col(31)).toEqual(events.map(({ item }) => (item as { owner: string }).owner));
        expect(col(32)).toEqual(events.map(({ e }) => e.type));
        events.forEach(({ e }, i) => {
          const json = slice(packed, col(33)[i] as number, col(34)[i] as number);
          expect(Buffer.from(json!).toString("utf8")).toBe(e.event);
        });
      }),
    );
  });

  it("lays payloads end to end with no byte wasted", () => {
    fc.assert(
      fc.property(fc.array(anyItem, { maxLength: 10 }), (items) => {
        const packed = batchParams(items)[0] as Buffer;
        const total = items.reduce(
          (n, item) =>
            n +
            (item.kind === "checkpoint"
              ? Buffer.byteLength(item.checkpoint) +
                Buffer.byteLength(item.metadata) +
                item.blobs.reduce((m, b) => m + (b.value?.byteLength ?? 0), 0)
              : item.kind === "events"
                ? item.events.reduce((m, e) => m + Buffer.byteLength(e.event), 0)
                : item.writes.reduce((m, w) => m + w.value.byteLength, 0)),
          0,
        );
        expect(packed.byteLength).toBe(total);
      }),
    );
  });

  it("sends empty arrays and an empty payload for no items", () => {
    const p = batchParams([]);
    expect((p[0] as Buffer).byteLength).toBe(0);
    expect(p.slice(1).every((column) => Array.isArray(column) && column.length === 0)).toBe(true);
    expect(p).toHaveLength(34);
  });
});
