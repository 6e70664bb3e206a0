import { PGlite } from "@electric-sql/pglite";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGate } from "./pglite-gate";
import { type PreparedPglite, preparedPglite } from "./pglite-prepared";

/*
 * Prepared statements on embedded PGlite answer exactly what PGlite's own query path answers, keep transactions to
 * their owner, and leave the connection usable after an error.
 */
describe("prepared statements on PGlite", () => {
  let client: PGlite;
  let prepared: PreparedPglite;

  beforeAll(async () => {
    client = await PGlite.create();
    const p = preparedPglite(client, createGate());
    if (!p) throw new Error("this PGlite lacks what prepared statements rely on");
    prepared = p;
    await client.exec(`CREATE TABLE t (
      id int PRIMARY KEY, label text, n bigint, flag boolean, doc jsonb, bytes bytea, at timestamptz, tags text[])`);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });

  const row = fc.record({
    label: fc.option(fc.string({ unit: "binary", maxLength: 40 }).map((s) => s.replaceAll("\u0000", ""))),
    n: fc.option(fc.integer({ min: -(2 ** 31), max: 2 ** 31 })),
    flag: fc.option(fc.boolean()),
    doc: fc.option(fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v))),
    bytes: fc.option(fc.uint8Array({ maxLength: 300 })),
    at: fc.option(fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })),
    tags: fc.option(
      fc.array(
        fc.string({ maxLength: 8 }).map((s) => s.replaceAll("\u0000", "")),
        { maxLength: 4 },
      ),
    ),
  });

  it("writes and reads every type as PGlite's own path does, in both row modes", async () => {
    let id = 0;
    await fc.assert(
      fc.asyncProperty(row, async (r) => {
        id += 1;
        const values = [id, r.label, r.n, r.flag, r.doc, r.bytes, r.at, r.tags];
        const insert =
          "INSERT INTO t VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8) RETURNING id, label, n, bytes";
        const returned = await prepared.query<Record<string, unknown>>(insert, values);
        const plain = await client.query<Record<string, unknown>>(
          "SELECT id, label, n, bytes FROM t WHERE id = $1",
          [id],
        );
        expect(returned.rows).toEqual(plain.rows);
        const select = "SELECT id, label, n, flag, doc, bytes, at, tags FROM t WHERE id = $1";
        for (const rowMode of ["object", "array"] as const) {
          const ours = await prepared.query(select, [id], { rowMode });
          const theirs = await client.query(`${select} AND true`, [id], { rowMode });
          expect(ours.rows).toEqual(theirs.rows);
        }
      }),
      { numRuns: 150 },
    );
    // The statements were prepared, and once each: the same texts did not add new ones.
    expect(prepared.prepared).toBe(2);
  });

  it("keeps another caller's transaction to itself", async () => {
    let release = () => {};
    let opened = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    const isOpen = new Promise<void>((r) => {
      opened = r;
    });
    const tx = prepared.client
      .transaction(async (t) => {
        await t.query("INSERT INTO t (id, label) VALUES ($1, $2)", [100_001, "inside"]);
        opened();
        await released;
        throw new Error("roll back");
      })
      .catch((e: Error) => e.message);
    await isOpen;
    // Issued while the transaction is open: it must wait for it, not run inside it (and be rolled back with it).
    const outside = prepared.query("INSERT INTO t (id, label) VALUES ($1, $2)", [100_002, "outside"]);
    await new Promise((r) => setTimeout(r, 50));
    release();
    expect(await tx).toBe("roll back");
    await outside;
    const ids = await prepared.query<{ id: number }>("SELECT id FROM t WHERE id > $1 ORDER BY id", [100_000]);
    expect(ids.rows.map((r) => r.id)).toEqual([100_002]);
  });

  it("reports errors with their code and stays usable; a statement that failed to parse is not kept", async () => {
    const before = prepared.prepared;
    await expect(prepared.query("INSERT INTO t (id) VALUES ($1)", [100_002])).rejects.toMatchObject({
      code: "23505",
    });
    await expect(prepared.query("SELEC id FROM t WHERE id = $1", [1])).rejects.toMatchObject({
      code: "42601",
    });
    expect(prepared.prepared).toBe(before + 1);
    const again = await prepared.query<{ id: number }>("SELECT id FROM t WHERE id = $1", [100_002]);
    expect(again.rows).toEqual([{ id: 100_002 }]);
  });
});
