import fc from "fast-check";

/*
 * Hostile-input generators for the fuzz suite (test side only: product code never imports this). Everything here is
 * a fast-check arbitrary, so a run is reproducible from its seed. Values are built to reach the edges a request
 * handler must refuse with a 4xx: wrong types, out-of-range numbers and dates, control characters and
 * right-to-left overrides, prototype keys, deep and huge JSON, wrong content types, tampered cursors.
 */

/** Largest body the server reads (lib/platform/http/http.ts MAX_BODY_BYTES); duplicated so the tests do not import product code. */
export const BODY_LIMIT = 256 * 1024;

const CONTROL = [..."\u0000\u0001\u0007\u0008\t\n\u000b\u000c\r\u001b\u001f\u007f"];
/** Bidi overrides and isolates, BOM, zero-width, line/paragraph separators, lone surrogates. */
const UNICODE_TRAPS = [..."\u202e\u202d\u2066\u2067\u2068\u2069\u200b\u200f\ufeff\u2028\u2029\uffff"];
const LONE_SURROGATES = ["\ud800", "\udfff", "\ud83d"];
const NASTY = [
  "",
  " ",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-0",
  "1e308",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "'; DROP TABLE threads; --",
  '" OR 1=1 --',
  "../../etc/passwd",
  "%00",
  "%",
  `$${"{"}7*7}`,
  "{{7*7}}",
  "<script>alert(1)</script>",
  "𝕳𝖊𝖑𝖑𝖔",
  "👩‍👩‍👧‍👦",
  "ORD-1001",
  "ord-9999",
  "admin@test.local",
];
export const PROTO_KEYS = ["__proto__", "constructor", "prototype"];

const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 3, arbitrary: fc.constantFrom(...CONTROL, ...UNICODE_TRAPS, ...LONE_SURROGATES) },
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
);

/** A long run of one character (ids and fields just over and far over their bounds). */
export const longString = fc
  .tuple(
    fc.constantFrom(201, 1001, 2001, 5001, 10_000, 20_001),
    fc.constantFrom("a", "\u0000", "é", "\u202e", "%"),
  )
  .map(([n, c]) => c.repeat(n));

/** Any string a hostile client might send: control characters, bidi overrides, lone surrogates, long runs. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.array(piece, { maxLength: 5 }).map((p) => p.join("")) },
  { weight: 1, arbitrary: longString },
);

/** Numbers a schema must bound: huge, negative, fractional, subnormal, past the safe integers. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1.5,
    1e308,
    -1e308,
    5e-324,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 63),
    1e21,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Numbers as query strings: what `Number()` accepts and what it should not. */
export const hostileNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "NaN",
    "Infinity",
    "-Infinity",
    "1e308",
    "-1",
    "0",
    "1.5",
    "0x10",
    "1_000",
    " 5",
    "+5",
    "00000000000000000001",
    "99999999999999999999",
    "2147483648",
    "9007199254740993",
    "١٢٣",
    "１２",
    "",
  ),
  hostileNumber.map(String),
);

/** Dates: year 0, year 300000, impossible days and times, offsets out of range, garbage. */
export const hostileDate: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "0000-01-01",
    "0000-00-00T00:00:00Z",
    "+300000-01-01T00:00:00Z",
    "300000-01-01",
    "-000001-01-01",
    "2026-13-01",
    "2026-02-30",
    "2025-02-29T10:00:00Z",
    "2026-02-28T24:00:00Z",
    "2026-11-30T23:59:60Z",
    "1969-12-31T23:59:59Z",
    "9999-12-31T23:59:59.999999+14:00",
    "9999-12-31T23:59:59-23:59",
    "2026-11-30T10:00:00+99:99",
    "2026-11-30T10:00:00.1234567Z",
    "1970-01-01T00:00:00.000000Z",
    "garbage",
    "now",
    "1e308",
  ),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

/** An object key: ordinary, prototype keys, control characters, bidi overrides. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...PROTO_KEYS) },
  { weight: 2, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom("a", "id", "threadId", "role", "admin", "isAdmin") },
);

/** Set `key` as an own enumerable property (so `__proto__` is serialized as a key rather than a prototype). */
export function withKey(
  target: Record<string, unknown>,
  key: string,
  value: unknown,
): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
  return target;
}

/** Any JSON value, with hostile strings, numbers and keys. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc
      .array(fc.tuple(hostileKey, tie("value")), { maxLength: 4 })
      .map((entries) => entries.reduce((o, [k, v]) => withKey(o, k, v), {} as Record<string, unknown>)),
  ),
})).value;

/** A plausible value for `key` replaced by anything hostile (wrong type, range, characters). */
export function mutateField(template: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(template);
  if (keys.length === 0) return fc.constant(template);
  return fc
    .tuple(fc.constantFrom(...keys), fc.oneof(hostileString, hostileNumber, hostileDate, hostileJson))
    .map(([key, value]) => withKey({ ...template }, key, value));
}

/** The template with extra keys (unknown or prototype keys). */
export function addKeys(template: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .array(fc.tuple(hostileKey, hostileJson), { minLength: 1, maxLength: 3 })
    .map((extra) => extra.reduce((o, [k, v]) => withKey(o, k, v), { ...template }));
}

/** How a request body is sent. Big ones are described, not built, until they are sent. */
export type BodySpec =
  | { kind: "json"; value: unknown }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: readonly number[] }
  /** `depth` levels of nesting: arrays, objects, unclosed brackets, or brackets inside a string (depth 1). */
  | { kind: "deep"; depth: number; shape: "array" | "object" | "unclosed" | "in-string" }
  /** A JSON body of `bytes` bytes; `lie`: Content-Length smaller or far larger than the body, or chunked. */
  | { kind: "huge"; bytes: number; lie?: "small" | "large" | "chunked" | "invalid" }
  | { kind: "form"; fields: [string, string][] }
  | { kind: "none" };

const deepBody = fc.record({
  kind: fc.constant("deep" as const),
  depth: fc.constantFrom(32, 33, 100, 10_000),
  shape: fc.constantFrom("array", "object", "unclosed", "in-string") as fc.Arbitrary<
    "array" | "object" | "unclosed" | "in-string"
  >,
});

const hugeBody = fc.record(
  {
    kind: fc.constant("huge" as const),
    bytes: fc.constantFrom(BODY_LIMIT - 64, BODY_LIMIT + 1, BODY_LIMIT + 100, 3 * 1024 * 1024),
    lie: fc.constantFrom("small", "large", "chunked", "invalid") as fc.Arbitrary<
      "small" | "large" | "chunked" | "invalid"
    >,
  },
  { requiredKeys: ["kind", "bytes"] },
);

const brokenText = fc.oneof(
  fc.constantFrom(
    "{not json",
    "",
    "{",
    "[",
    '{"a":1,}',
    "nul",
    "\u0000",
    "\ufeff{}",
    '{"a":"\\ud800"}',
    "1e99999",
  ),
  hostileString,
);

/** Body variants for a route whose valid body looks like `template`. */
export function hostileBody(template: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<BodySpec> {
  const json = (a: fc.Arbitrary<unknown>) => a.map((value) => ({ kind: "json" as const, value }));
  return fc.oneof(
    { weight: 3, arbitrary: json(template) },
    { weight: 6, arbitrary: json(template.chain(mutateField)) },
    { weight: 3, arbitrary: json(template.chain(addKeys)) },
    { weight: 2, arbitrary: json(hostileJson) },
    { weight: 1, arbitrary: deepBody },
    { weight: 1, arbitrary: hugeBody },
    { weight: 1, arbitrary: brokenText.map((text) => ({ kind: "text" as const, text })) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          [0xff, 0xfe],
          [0xc0, 0xaf],
          [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d],
        )
        .map((bytes) => ({ kind: "bytes" as const, bytes })),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.tuple(hostileKey, hostileString), { maxLength: 3 })
        .map((fields) => ({ kind: "form" as const, fields })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
  );
}

/** Content types: mostly JSON (to get past the 415), else text, forms, multipart, none, near-misses. */
export const contentType: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 12, arbitrary: fc.constant("application/json") },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "text/plain",
      "application/x-www-form-urlencoded",
      null,
      "multipart/form-data; boundary=xyz",
      "APPLICATION/JSON; charset=utf-8",
      "application/json; charset=utf-16",
      "application/jsonx",
      "application/json-patch+json",
      "application/*",
      "",
    ),
  },
);

/** A path parameter: percent-encoded control characters, bidi overrides, invalid escapes, 10k characters. */
export const hostileId: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "%00",
      "a%00b",
      "%01",
      "%7F",
      "%E2%80%AE",
      "%zz",
      "%",
      "%C0%AF",
      "%FF",
      "%ED%A0%80",
      "%2e%2e",
      "%2F",
      "a%2Fb",
      "null",
      "0",
      "-1",
      "00000000-0000-0000-0000-000000000000",
      "x".repeat(201),
      "x".repeat(10_000),
      "%00".repeat(3000),
    ),
  },
  { weight: 3, arbitrary: hostileString.filter((s) => s.length > 0).map(encodeURIComponentLoose) },
);

/** `encodeURIComponent` that does not throw on lone surrogates (they go out as an invalid escape instead). */
export function encodeURIComponentLoose(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s.replace(/[\ud800-\udfff]/g, "%ED%A0%80").replace(/[^\w%-]/g, (c) => {
      try {
        return encodeURIComponent(c);
      } catch {
        return "%3F";
      }
    });
  }
}

/** Base64url of a tampered inbox cursor: wrong shapes, impossible timestamps, NUL and long ids, other listings. */
export const tamperedInboxCursor: fc.Arbitrary<string> = fc
  .oneof(
    fc.record({
      m: fc.constantFrom("pending", "all", "running", "completed", "nope", "__proto__"),
      t: fc.oneof(
        fc.constantFrom(
          "2026-13-01T00:00:00.000000Z",
          "0000-01-01T00:00:00.000000Z",
          "2025-02-29T00:00:00.000000Z",
          "2026-01-01T24:00:00.000000Z",
          "9999-12-31T23:59:59.999999Z",
          "1970-01-01T00:00:00.000000Z",
          "2026-01-01T00:00:00.000000Z",
          "+275760-09-13T00:00:00.000000Z",
        ),
        hostileDate,
      ),
      i: fc.oneof(hostileString, fc.constantFrom("\u0000", "a\u0000b", "x".repeat(10_000))),
    }),
    hostileJson,
  )
  .map((value) => Buffer.from(JSON.stringify(value) ?? "null").toString("base64url"));

/** A cursor-like garbage string (not base64url JSON at all). */
export const garbageCursor: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  fc.constantFrom("====", "e30", "W10", "bnVsbA", "eyJ", "%00", "+/+/", "a".repeat(1001)),
);

/** A query string from name → value arbitraries plus unknown, prototype, duplicate and control-character names. */
export function hostileQuery(known: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const names = Object.keys(known);
  const knownPair = names.length
    ? fc.constantFrom(...names).chain((n) => known[n]!.map((v) => [n, v] as [string, string]))
    : fc.constant(["x", "1"] as [string, string]);
  const pair = fc.oneof(
    { weight: 8, arbitrary: knownPair },
    { weight: 1, arbitrary: fc.tuple(hostileKey, hostileString) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...names, "x"), hostileString) },
  );
  const encoded = fc
    .array(pair, { maxLength: 4 })
    .map((pairs) =>
      pairs.map(([k, v]) => `${encodeURIComponentLoose(k)}=${encodeURIComponentLoose(v)}`).join("&"),
    );
  const rawTail = fc.constantFrom("", "", "", "&", "&&=", "&%", "&a=%zz", "&cursor", "&limit=%00", "&=x");
  return fc.tuple(encoded, rawTail).map(([q, tail]) => `${q}${tail}`);
}

/** Who sends a request: a role, the intake key, nobody, or a forged credential. */
export type Sender =
  | "viewer"
  | "operator"
  | "supervisor"
  | "admin"
  | "intake"
  | "anonymous"
  | "bad-bearer"
  | "bad-cookie"
  /** A throwaway user's session (for sign-out, which must not end the roles' sessions). */
  | "victim";

const ROLE_ORDER = ["viewer", "operator", "supervisor", "admin"] as const;

/** Mostly someone allowed to call (`allowed`), else a lower role, nobody, or a forged key or cookie. */
export function sender(allowed: Sender[]): fc.Arbitrary<Sender> {
  const others = (["intake", ...ROLE_ORDER] as Sender[]).filter((s) => !allowed.includes(s));
  return fc.oneof(
    { weight: 14, arbitrary: fc.constantFrom(...allowed) },
    ...(others.length ? [{ weight: 2, arbitrary: fc.constantFrom(...others) }] : []),
    { weight: 1, arbitrary: fc.constantFrom<Sender>("anonymous", "bad-bearer", "bad-cookie") },
  );
}

/** A forged Authorization header value. */
export const forgedBearer = fc.oneof(
  fc.constantFrom(
    "Bearer",
    "Bearer ",
    "Bearer a b",
    "Basic YWRtaW46YWRtaW4=",
    "Bearer hitl_",
    "bearer hitl_0",
  ),
  fc
    .string({ unit: "grapheme-ascii", minLength: 1, maxLength: 600 })
    .map((s) => `Bearer hitl_${s.replace(/\s/g, "x")}`),
);

/** A forged metrics scrape token: not the server's METRICS_TOKEN, in a well-formed or broken Authorization header. */
export const forgedMetricsToken = fc.oneof(
  fc.constantFrom(
    "Bearer",
    "Bearer ",
    "Bearer metrics",
    `Bearer ${"m".repeat(24)}`,
    "Token abc",
    "Bearer a b",
  ),
  fc
    .string({ unit: "grapheme-ascii", minLength: 1, maxLength: 600 })
    .map((s) => `Bearer ${s.replace(/\s/g, "x")}`),
);

/** Headers a browser on another site would send (refused before anything is read). */
export const crossSiteHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { origin: "http://evil.example" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { origin: "not a url" },
    ),
  },
);
