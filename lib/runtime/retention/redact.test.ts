import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeRedactor } from "./redact";

const NAME = "[erased customer]";
const EMAIL = "erased@erased.invalid";
const ann = makeRedactor([
  { text: "Ann", replacement: NAME },
  { text: "ann@example.com", replacement: EMAIL },
]);

describe("whole-word redaction", () => {
  it("never rewrites inside a longer word, a longer address or a JSON key", () => {
    for (const untouched of [
      "channel_versions",
      "Joanna Annis",
      "joanna@example.com",
      "jo.ann@example.com",
      "ann@example.com.au",
      "shannon@example.com",
      "Annabel",
      "ann_2",
    ]) {
      expect(ann.text(untouched), untouched).toBe(untouched);
    }
    const checkpoint = { channel_versions: { channel: "00001.ann" }, annotations: ["Annis"] };
    expect(ann.json(checkpoint)).toBe(checkpoint);
  });

  it("rewrites the whole word or address, any letter case, at any boundary", () => {
    expect(ann.text("Hi, I'm ANN. Mail ann@example.com, or Ann@Example.com.")).toBe(
      `Hi, I'm ${NAME}. Mail ${EMAIL}, or ${EMAIL}.`,
    );
    expect(makeRedactor([{ text: "Ann  Ample", replacement: NAME }]).text("ann\nample wrote")).toBe(
      `${NAME} wrote`,
    );
  });

  it("keeps structural values (serializer tags, ids, statuses, answers' choices) and rewrites the others", () => {
    const message = {
      lc: 1,
      type: "constructor",
      id: ["langchain_core", "messages", "HumanMessage"],
      kwargs: { content: "Ann here", id: "ann", name: "Ann" },
      decision: "ann",
      outcome: { type: "interrupt", interrupts: [{ id: "ann", message: "Reply to Ann" }] },
    };
    expect(ann.json(message)).toEqual({
      ...message,
      kwargs: { content: `${NAME} here`, id: "ann", name: NAME },
      outcome: { type: "interrupt", interrupts: [{ id: "ann", message: `Reply to ${NAME}` }] },
    });
  });

  it("property: exactly the whole occurrences are rewritten (checked against a character-by-character oracle)", () => {
    const word = fc.oneof(
      fc.constantFrom("ann", "Ann", "ANN", "anna", "jo", "ann@x.io"),
      fc.array(fc.constantFrom(..."anANxyz_0"), { minLength: 1, maxLength: 5 }).map((a) => a.join("")),
    );
    const separator = fc.constantFrom(
      " ",
      ", ",
      "\n",
      "(",
      ")",
      "'",
      '"',
      "!",
      ":",
      ".",
      "@",
      "-",
      "+",
      ". ",
    );
    const isWord = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{N}_]/u.test(ch);
    /** Whole occurrences of "ann", by the rule written out: what may not stand before and after it. */
    const whole = (text: string) => {
      let n = 0;
      for (let i = 0; i + 3 <= text.length; i++) {
        if (text.slice(i, i + 3).toLowerCase() !== "ann") continue;
        const before = text[i - 1];
        const after = text[i + 3];
        if (isWord(before) || (before !== undefined && ".+@-".includes(before))) continue;
        if (isWord(after) || after === "@" || after === "-") continue;
        if ((after === "." || after === "+") && isWord(text[i + 4])) continue;
        n += 1;
        i += 2;
      }
      return n;
    };
    const redactor = makeRedactor([{ text: "Ann", replacement: "#" }]);
    fc.assert(
      fc.property(fc.array(fc.tuple(word, separator), { maxLength: 12 }), (parts) => {
        const text = parts.map(([w, s]) => w + s).join("");
        const out = redactor.text(text);
        const found = whole(text);
        if (found === 0) expect(out).toBe(text);
        expect(out.split("#").length - 1 - (text.split("#").length - 1)).toBe(found);
        expect(whole(out)).toBe(0);
      }),
      { numRuns: 3_000 },
    );
  });

  it("property: JSON keys and non-string values never change", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ minLength: 3, maxLength: 6 }), (value, needle) => {
        const redactor = makeRedactor([{ text: needle, replacement: "[x]" }]);
        const keys = (v: unknown): unknown =>
          Array.isArray(v)
            ? v.map(keys)
            : v !== null && typeof v === "object"
              ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, keys(x)]))
              : typeof v === "string"
                ? "s"
                : v;
        expect(keys(redactor.json(value))).toEqual(keys(value));
      }),
      { numRuns: 500 },
    );
  });
});

describe("sealed values", () => {
  it("never rewrites a sealed value, at any depth, whatever its ciphertext spells", () => {
    const redactor = makeRedactor([{ text: "Ann", replacement: "[erased customer]" }]);
    const sealedText = "sealed:v1:3Ann/xyz";
    const envelope = { $sealed: "3Ann/xyz" };
    expect(redactor.json({ note: "Ann", body: envelope, text: sealedText, list: [envelope] })).toEqual({
      note: "[erased customer]",
      body: envelope,
      text: sealedText,
      list: [envelope],
    });
    // An object that only looks like an envelope (more keys) is data: its strings are matched.
    expect(redactor.json({ $sealed: "Ann", other: 1 })).toEqual({ $sealed: "[erased customer]", other: 1 });
  });
});
