/**
 * Postgres `jsonb` refuses the NUL character, yet LangGraph metadata and checkpoints may carry it (a node name, a
 * user-supplied metadata value). Instead of stripping it, as the official saver does, strings are escaped with a
 * reversible, prefix-free code before they reach `jsonb`:
 *   U+0001 → U+0001 U+0002,   U+0000 → U+0001 U+0003.
 * Containment filters (`metadata @> filter`) stay exact because the filter is encoded the same way.
 */
const ESCAPE = "\u0001";
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL and U+0001 are exactly what this codec escapes
const NEEDS_ENCODING = /[\u0000\u0001]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences are control characters by design
const ENCODED = /\u0001([\u0002\u0003])/g;

function encodeString(s: string): string {
  return s.replace(NEEDS_ENCODING, (c) => (c === "\u0000" ? `${ESCAPE}\u0003` : `${ESCAPE}\u0002`));
}

function decodeString(s: string): string {
  return s.replace(ENCODED, (_, c: string) => (c === "\u0002" ? ESCAPE : "\u0000"));
}

function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[f(k)] = mapStrings(v, f);
    return out;
  }
  return value;
}

/** JSON text of `value`, safe for a `jsonb` parameter. */
export function toJsonbText(value: unknown): string {
  return jsonbSafe(JSON.stringify(value));
}

/** Make already-serialized JSON text safe for `jsonb` (only parses it again when it holds U+0000 or U+0001). */
export function jsonbSafe(jsonText: string): string {
  if (!jsonText.includes("\\u0000") && !jsonText.includes("\\u0001")) return jsonText;
  return JSON.stringify(mapStrings(JSON.parse(jsonText), encodeString));
}

/** Reverse of {@link jsonbSafe} on the text Postgres returns for a `jsonb` value. */
export function fromJsonbText(jsonText: string): string {
  if (!jsonText.includes("\\u0001")) return jsonText;
  return JSON.stringify(mapStrings(JSON.parse(jsonText), decodeString));
}
