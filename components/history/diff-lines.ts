/*
 * A jsondiffpatch delta (the checkpoint view's `diff.delta`) as a flat list of changes a person can read: one line
 * per added, changed, removed or moved value, with its path. Pure and isomorphic; the values stay data (rendered as
 * text by React), never markup.
 *
 * Delta format (jsondiffpatch): [new] added · [old, new] changed · [old, 0, 0] removed · [patch, 0, 2] text diff ·
 * ["", to, 3] moved · {_t: "a", "i": …, "_i": …} array (i = index in the new array, _i = in the old one) · {key: …}
 * object.
 */

export type Change =
  | { kind: "added"; path: string; after: unknown }
  | { kind: "changed"; path: string; before: unknown; after: unknown }
  | { kind: "removed"; path: string; before: unknown }
  | { kind: "moved"; path: string; to: number }
  | { kind: "text"; path: string; patch: string };

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function join(path: string, key: string, index: boolean): string {
  if (index) return `${path}[${key}]`;
  const part = IDENTIFIER.test(key) ? key : `[${JSON.stringify(key)}]`;
  return path === "" || part.startsWith("[") ? `${path}${part}` : `${path}.${part}`;
}

function leaf(delta: unknown[], path: string): Change | null {
  if (delta.length === 1) return { kind: "added", path, after: delta[0] };
  if (delta.length === 2) return { kind: "changed", path, before: delta[0], after: delta[1] };
  if (delta.length === 3 && delta[1] === 0 && delta[2] === 0)
    return { kind: "removed", path, before: delta[0] };
  if (delta.length === 3 && delta[2] === 2) return { kind: "text", path, patch: String(delta[0]) };
  if (delta.length === 3 && delta[2] === 3) return { kind: "moved", path, to: Number(delta[1]) };
  return null;
}

function isArrayDelta(delta: object): boolean {
  return (delta as { _t?: unknown })._t === "a";
}

/** Every change of a delta, depth first; object keys and array indices in order. */
export function flattenDelta(delta: unknown, path = ""): Change[] {
  if (delta === null || delta === undefined || typeof delta !== "object") return [];
  if (Array.isArray(delta)) {
    const change = leaf(delta, path);
    return change ? [change] : [];
  }
  const array = isArrayDelta(delta);
  const entries = Object.entries(delta).filter(([key]) => !(array && key === "_t"));
  // Array entries by index, a removal (old index) before an insertion at the same number.
  const order = (key: string) => Number(key.replace(/^_/, "")) + (key.startsWith("_") ? 0 : 0.5);
  entries.sort(([a], [b]) => (array ? order(a) - order(b) : a < b ? -1 : a > b ? 1 : 0));
  return entries.flatMap(([key, value]) =>
    flattenDelta(value, array ? join(path, key.replace(/^_/, ""), true) : join(path, key, false)),
  );
}

/** The top-level state key a path belongs to ("order.items[0]" → "order"). */
export function rootKey(path: string): string {
  const match = /^([^.[]+)|^\["((?:[^"\\]|\\.)*)"\]/.exec(path);
  return match?.[1] ?? match?.[2] ?? path;
}

/** Group changes by top-level key, keeping their order. */
export function groupByKey(changes: Change[]): [string, Change[]][] {
  const groups = new Map<string, Change[]>();
  for (const change of changes) {
    const key = rootKey(change.path);
    groups.set(key, [...(groups.get(key) ?? []), change]);
  }
  return [...groups];
}

/** A one-line preview of a value: a chat message as `role: "text"`, anything else as JSON, cut at `max`. */
export function preview(value: unknown, max = 120): { text: string; truncated: boolean } {
  let text: string;
  if (value === undefined) text = "undefined";
  else if (isMessage(value)) text = `${value.role}: ${JSON.stringify(value.content)}`;
  else text = JSON.stringify(value) ?? String(value);
  return text.length > max
    ? { text: `${text.slice(0, max - 1)}…`, truncated: true }
    : { text, truncated: false };
}

function isMessage(value: unknown): value is { role: string; content: string } {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { role?: unknown }).role === "string" &&
    typeof (value as { content?: unknown }).content === "string"
  );
}
