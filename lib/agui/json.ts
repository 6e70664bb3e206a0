/**
 * A value as it will read after a trip through JSON, which is how every event reaches the browser and the event
 * log: `toJSON` applied (dates become ISO strings), `undefined` and functions dropped, bigints as decimal strings.
 * Returns `undefined` for a value JSON cannot represent at all. Throws on cycles.
 */
export function jsonSafe(value: unknown): unknown {
  const text = JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v));
  return text === undefined ? undefined : JSON.parse(text);
}
