import fc from "fast-check";
import { packBlobs } from "./sql";

/** What the statements do with a packed parameter: `substring($blob FROM off + 1 FOR len)`, NULL when len < 0. */
function unpack({ packed, lengths, offsets }: ReturnType<typeof packBlobs>): (Uint8Array | null)[] {
  return lengths.map((len, i) => (len < 0 ? null : packed.subarray(offsets[i], offsets[i]! + len)));
}

const blobs = fc.array(fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null }), { maxLength: 20 });

describe("packBlobs", () => {
  it("packs values so the statement's slices give them back, NULLs included", () => {
    fc.assert(
      fc.property(blobs, (values) => {
        const pack = packBlobs(values);
        expect(unpack(pack).map((b) => (b ? [...b] : null))).toEqual(values.map((b) => (b ? [...b] : null)));
      }),
    );
  });

  it("lays values end to end: offsets are running sums, lengths -1 for NULL, no byte wasted", () => {
    fc.assert(
      fc.property(blobs, (values) => {
        const { packed, lengths, offsets } = packBlobs(values);
        expect(lengths).toEqual(values.map((b) => (b ? b.byteLength : -1)));
        let at = 0;
        values.forEach((b, i) => {
          expect(offsets[i]).toBe(at);
          at += b?.byteLength ?? 0;
        });
        expect(packed.byteLength).toBe(at);
      }),
    );
  });

  it("packs nothing into an empty parameter", () => {
    expect(packBlobs([])).toEqual({ packed: Buffer.alloc(0), lengths: [], offsets: [] });
    const { packed, lengths } = packBlobs([null, new Uint8Array(0)]);
    expect(packed.byteLength).toBe(0);
    expect(lengths).toEqual([-1, 0]);
  });
});
