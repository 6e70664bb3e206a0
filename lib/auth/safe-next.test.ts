import fc from "fast-check";
import { DEFAULT_NEXT, safeNext } from "./safe-next";

/** Pieces that have taken sign-in redirects off-site somewhere: slashes of both kinds, controls, schemes, hosts. */
const hostilePiece = fc.constantFrom(
  "/",
  "//",
  "\\",
  "%5C",
  "%2F",
  "%09",
  "\t",
  "\n",
  "\r",
  "\u0000",
  "\u007f",
  "\u0085",
  " ",
  "\u3000",
  ".",
  "..",
  "@",
  ":",
  "?",
  "#",
  "%",
  "evil.example",
  "https:",
  "javascript:",
  "data:",
  "a",
  "threads",
);
const hostile = fc.array(hostilePiece, { maxLength: 8 }).map((parts) => parts.join(""));
const segment = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
const ordinaryPath = fc
  .tuple(
    fc.array(segment, { minLength: 1, maxLength: 4 }),
    fc.option(fc.stringMatching(/^[a-z]{1,5}=[a-z0-9]{1,5}$/), { nil: undefined }),
  )
  .map(([segments, query]) => `/${segments.join("/")}${query ? `?${query}` : ""}`);

/** Where a browser at `origin` ends up after `location.assign(next)` (WHATWG URL parsing, as browsers do). */
const landing = (next: string, origin: string) => new URL(next, origin);

describe("safeNext", () => {
  const origins = ["https://console.example", "http://127.0.0.1:3000"];

  it("never leaves the site, whatever it is given", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          hostile,
          fc.string(),
          fc.constant("/").chain(() => hostile.map((h) => `/${h}`)),
        ),
        (value) => {
          const next = safeNext(value);
          expect(next.startsWith("/")).toBe(true);
          expect(next.startsWith("//")).toBe(false);
          // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters
          expect(/[\\\u0000-\u001f\u007f]/.test(next)).toBe(false);
          for (const origin of origins) expect(landing(next, origin).origin).toBe(origin);
        },
      ),
      { seed: 20_260_509, numRuns: 5_000 },
    );
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(fc.oneof(hostile, ordinaryPath), (value) => {
        expect(safeNext(safeNext(value))).toBe(safeNext(value));
      }),
      { seed: 7, numRuns: 2_000 },
    );
  });

  it("keeps ordinary paths with their query as they are", () => {
    fc.assert(
      fc.property(ordinaryPath, (path) => {
        expect(safeNext(path)).toBe(path);
      }),
      { seed: 11, numRuns: 1_000 },
    );
  });

  it("refuses the known escapes", () => {
    for (const value of [
      "/\\evil.example",
      "/\t/evil.example",
      "/\n/evil.example",
      "//evil.example",
      "/\\/evil.example",
      "/.//evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "",
      undefined,
      ["/threads"],
      `/${"a".repeat(3000)}`,
    ]) {
      expect([value, safeNext(value)]).toEqual([value, DEFAULT_NEXT]);
    }
    expect(safeNext("/threads/abc/history?view=tree#cp")).toBe("/threads/abc/history?view=tree#cp");
  });
});
