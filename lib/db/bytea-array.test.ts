import fc from "fast-check";
import pg from "pg";
import { parseByteaArray } from "./bytea-array";

describe("parseByteaArray", () => {
  it("reads what pg's own parser reads, fast", () => {
    // 1001 is bytea[]; pg's typings only list scalar type ids.
    const lookup = pg.types.getTypeParser as unknown as (
      oid: number,
      format: string,
    ) => (t: string) => unknown;
    const reference = lookup(1001, "text");
    const big = Buffer.alloc(200_000, 0xab).toString("hex");
    for (const literal of ['{"\\\\x0102ff",NULL,"\\\\x"}', "{}", "{NULL}", `{"\\\\x${big}","\\\\x00"}`]) {
      expect(parseByteaArray(literal)).toEqual(reference(literal));
    }
    expect(parseByteaArray(null)).toBeNull();
  });

  it("gives back the bytes of any array, as pg writes it in text format", () => {
    const values = fc.array(fc.option(fc.uint8Array({ maxLength: 48 }), { nil: null }), { maxLength: 12 });
    fc.assert(
      fc.property(values, (array) => {
        // Postgres's text output for bytea[]: hex elements quoted, their backslash escaped; NULL bare.
        const literal = `{${array.map((b) => (b ? `"\\\\x${Buffer.from(b).toString("hex")}"` : "NULL")).join(",")}}`;
        const parsed = parseByteaArray(literal);
        expect(parsed?.map((b) => (b ? [...b] : null))).toEqual(array.map((b) => (b ? [...b] : null)));
      }),
    );
  });
});
