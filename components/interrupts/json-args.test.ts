import fc from "fast-check";
import { readJsonArgs } from "./json-args";

describe("the JSON fallback of an edit form (issue 53)", () => {
  it("reads every JSON object back as its arguments", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (args) => {
        const read = readJsonArgs(JSON.stringify(args, null, 2));
        expect(read).toEqual({ ok: true, args: JSON.parse(JSON.stringify(args)) });
      }),
    );
  });

  it("says what is wrong with anything else, in words, and never gives arguments for it", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc
            .jsonValue()
            .filter((v) => typeof v !== "object" || v === null || Array.isArray(v))
            .map((v) => JSON.stringify(v)),
        ),
        (text) => {
          let object = false;
          try {
            const v = JSON.parse(text);
            object = typeof v === "object" && v !== null && !Array.isArray(v);
          } catch {
            object = false;
          }
          fc.pre(!object);
          const read = readJsonArgs(text);
          expect(read.ok).toBe(false);
          if (!read.ok)
            expect(read.error).toMatch(/^(Not valid JSON: |The arguments must be one JSON object)/);
        },
      ),
    );
  });
});
