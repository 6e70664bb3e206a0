import fc from "fast-check";
import { hostileJson, hostileString } from "@/e2e/support/hostile";
import { AppError } from "../../contract/errors";
import { containsLoneSurrogate, containsNul, jsonTextDepth, MAX_JSON_DEPTH, readJson } from "./http";

/*
 * Properties of the body guards (issue 9): for arbitrary text and JSON they answer, and `readJson` refuses only with
 * a 4xx AppError. Seeded like the HTTP fuzz suite (FUZZ_SEED).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_901);
const runs = { seed: SEED, numRuns: 1000 };

/** Nesting depth of a parsed value (reference for `jsonTextDepth`). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Object.values(value as Record<string, unknown>).map(depthOf);
  return 1 + Math.max(0, ...children);
}

/** Whether a JSON text escapes a NUL (an odd run of backslashes before `u0000`): reference for `containsNul`. */
const escapesNul = (text: string) => /(^|[^\\])(\\\\)*\\u0000/.test(text);

const anyJson = fc.oneof(hostileJson, fc.jsonValue());
const deepText = fc
  .tuple(fc.integer({ min: 0, max: 5000 }), fc.constantFrom("[", '{"a":', '[{"b":'), fc.boolean())
  .map(([n, open, close]) => `${open.repeat(n)}${close ? "1" : ""}`);

describe("jsonTextDepth", () => {
  it("is the nesting depth of any JSON value's text", () => {
    fc.assert(
      fc.property(anyJson, (value) => jsonTextDepth(JSON.stringify(value) ?? "null") === depthOf(value)),
      runs,
    );
  });

  it("answers a number for any text, and never more than its opening brackets", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), hostileString, deepText), (text) => {
        const depth = jsonTextDepth(text);
        return Number.isInteger(depth) && depth >= 0 && depth <= (text.match(/[[{]/g)?.length ?? 0);
      }),
      runs,
    );
  });
});

describe("containsNul", () => {
  it("finds a NUL in any key or string of any JSON value, and only then", () => {
    fc.assert(
      fc.property(anyJson, (value) => containsNul(value) === escapesNul(JSON.stringify(value) ?? "")),
      runs,
    );
  });
});

describe("containsLoneSurrogate", () => {
  it("flags exactly the values whose text Postgres jsonb would refuse (a lone surrogate escape)", () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        const text = JSON.stringify(value) ?? "";
        // JSON.stringify writes a lone surrogate as an escape and leaves a pair as its character.
        return containsLoneSurrogate(value) === /(^|[^\\])(\\\\)*\\ud[89a-f][0-9a-f]{2}/.test(text);
      }),
      runs,
    );
  });
});

describe("readJson", () => {
  const body = fc.oneof(
    anyJson.map((v) => JSON.stringify(v) ?? ""),
    fc.string({ unit: "binary" }),
    hostileString,
    deepText,
  );
  const type = fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "");

  it("returns a shallow NUL-free value or refuses with a 4xx AppError, for any body", async () => {
    await fc.assert(
      fc.asyncProperty(body, type, async (text, contentType) => {
        const request = new Request("http://localhost/", {
          method: "POST",
          body: text,
          headers: contentType ? { "content-type": contentType } : {},
        });
        if (!contentType) request.headers.delete("content-type");
        try {
          const value = await readJson(request);
          return !containsNul(value) && !containsLoneSurrogate(value) && depthOf(value) <= MAX_JSON_DEPTH;
        } catch (error) {
          return error instanceof AppError && error.status >= 400 && error.status < 500;
        }
      }),
      runs,
    );
  });
});
