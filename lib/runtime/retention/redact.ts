/*
 * Whole-word redaction of a data subject's values inside their own rows (erasure, lib/runtime/retention/erasure.ts). Pure: no
 * I/O, so it is property-tested on its own.
 *
 * A value is matched only as a whole: never inside a longer word ("Ann" is not in "channel" or "Joanna", an address
 * `ann@example.com` is not in `joanna@example.com` or `jo.ann@example.com`), case-insensitively, with any run of
 * white space inside a value matching any other. Inside JSON only string *values* are rewritten: never a key, never a
 * number, and never the plain value of a structural key (`type`, `id`, `lc`, a status, an answer's choice …; objects
 * under them are walked), so a checkpoint's or an event's shape reads the same afterwards.
 */

/** One value to erase and what replaces it. */
export interface Needle {
  text: string;
  replacement: string;
}

/** Keys whose string values are structure (serializer tags, ids, statuses, choices): never rewritten. */
const STRUCTURAL_KEY =
  /^(?:lc|type|id|ids|kind|status|action|role|decision|choice|outcome|optionId|tool_call_id|channel|node|checkpoint_id|checkpoint_ns|task_id|task_path|thread_id|run_id|interrupt_id|interruptId|threadId|runId|messageId|toolCallId|parentMessageId|seq|version)$|(?:Id|_id|Ids|_ids)$/;

/** A string, or a list of strings (a serializer's constructor path): a structural key's value kept as it is. */
const isPlain = (v: unknown) =>
  typeof v !== "object" ||
  v === null ||
  (Array.isArray(v) && v.every((x) => typeof x !== "object" || x === null));

const WORD = String.raw`\p{L}\p{N}_`;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const isWordChar = (ch: string) => /[\p{L}\p{N}_]/u.test(ch);

/**
 * The pattern of one needle: its words in order, any white space between them, bounded as a whole. A value continues
 * with the characters words and addresses are made of: `jo.ann@…` holds neither `ann@…` nor `Ann`, `Mary-Ann` not `Ann`;
 * a sentence's full stop ends it (`… Ann.`).
 */
function needlePattern(text: string): string {
  const trimmed = text.trim();
  const body = trimmed.split(/\s+/u).map(escapeRegExp).join(String.raw`\s+`);
  const before = isWordChar(trimmed[0] ?? "") ? `(?<![${WORD}.+@\\-])` : "";
  const after = isWordChar(trimmed.at(-1) ?? "") ? `(?![${WORD}@\\-])(?![.+][${WORD}])` : "";
  return `${before}${body}${after}`;
}

/** A redactor for a set of needles: `text` rewrites a string, `json` a parsed JSON value (keys kept). */
export interface Redactor {
  text(value: string): string;
  json<T>(value: T): T;
  /** Whether `value` (a string) holds any needle as a whole. */
  matches(value: string): boolean;
}

/** The prefix of a sealed text value and the one key of a sealed JSON value (lib/db/vault.ts: SEALED_TEXT, SealedJson). */
const SEALED_TEXT_PREFIX = "sealed:v1:";
const isSealedEnvelope = (value: unknown): boolean =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length === 1 &&
  typeof (value as { $sealed?: unknown }).$sealed === "string";

/**
 * Build the redactor. Needles shorter than 3 characters (after trimming) are ignored: a two-letter value is not
 * distinctive enough to erase by matching. Longer needles are tried first ("Ann Ample" before "Ann").
 */
export function makeRedactor(needles: readonly Needle[]): Redactor {
  const list = needles
    .map((n) => ({ text: n.text.trim(), replacement: n.replacement }))
    .filter((n) => n.text.length >= 3)
    .sort((a, b) => b.text.length - a.text.length);
  if (list.length === 0) {
    return { text: (v) => v, json: (v) => v, matches: () => false };
  }
  const patterns = list.map((n) => needlePattern(n.text));
  const combined = new RegExp(patterns.map((p) => `(${p})`).join("|"), "giu");
  const probe = new RegExp(combined.source, "iu");
  const text = (value: string): string =>
    value.replace(combined, (...groups: unknown[]) => {
      const index = groups.slice(1, 1 + list.length).findIndex((g) => g !== undefined);
      return list[index]?.replacement ?? "";
    });
  const walk = (value: unknown): unknown => {
    // A value sealed under a key (lib/db/vault.ts), at any depth, is erased with its key: its ciphertext is never
    // rewritten (its base64 may spell a name by chance).
    if (typeof value === "string") return value.startsWith(SEALED_TEXT_PREFIX) ? value : text(value);
    if (isSealedEnvelope(value)) return value;
    if (Array.isArray(value)) {
      let changed = false;
      const out = value.map((v) => {
        const next = walk(v);
        if (next !== v) changed = true;
        return next;
      });
      return changed ? out : value;
    }
    if (value !== null && typeof value === "object") {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        const next = STRUCTURAL_KEY.test(key) && isPlain(v) ? v : walk(v);
        if (next !== v) changed = true;
        out[key] = next;
      }
      return changed ? out : value;
    }
    return value;
  };
  return {
    text,
    json: <T>(value: T) => walk(value) as T,
    matches: (value: string) => probe.test(value),
  };
}
