import fc from "fast-check";
import { fromJsonbText, jsonbSafe, toJsonbText } from "./json-text";

// Strings over all of UTF-16, NUL and U+0001 included, with those two made frequent.
const hostile = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom("\u0000", "\u0001", "\u0002", "\u0003", "a") }),
);
const json = fc.jsonValue({
  stringUnit: fc.constantFrom("\u0000", "\u0001", "\u0002", "\u0003", "a", "é", "😀"),
});

describe("jsonb text codec", () => {
  it("never hands jsonb a NUL, and reads back exactly what was written", () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = toJsonbText(value);
        expect(text).not.toContain("\\u0000");
        expect(JSON.parse(fromJsonbText(text))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it("escapes keys as well as values", () => {
    const text = toJsonbText({ "a\u0000": ["\u0001", "b\u0000c"] });
    expect(text).not.toContain("\\u0000");
    expect(JSON.parse(fromJsonbText(text))).toEqual({ "a\u0000": ["\u0001", "b\u0000c"] });
  });

  it("is injective on strings, so containment filters encoded the same way stay exact", () => {
    fc.assert(
      fc.property(hostile, hostile, (a, b) => {
        fc.pre(a !== b);
        expect(toJsonbText(a)).not.toBe(toJsonbText(b));
      }),
    );
  });

  it("leaves text without NUL or U+0001 untouched (no reparse on the hot path)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        fc.pre(!text.includes("\\u0000") && !text.includes("\\u0001"));
        expect(jsonbSafe(text)).toBe(text);
        expect(fromJsonbText(text)).toBe(text);
      }),
    );
  });
});
