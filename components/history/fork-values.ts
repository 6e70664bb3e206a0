/** The state edits of a fork, read from the JSON the operator typed. */
export type ForkValues =
  | { ok: true; values: Record<string, unknown> | undefined }
  | { ok: false; error: string };

/**
 * Parse the fork's state edits: empty text (or `{}`) means none; otherwise a JSON object whose keys are state
 * channels the fork may set (`messages` is never one: the conversation is history, not an edit).
 */
export function parseForkValues(text: string, channels: readonly string[]): ForkValues {
  if (text.trim() === "") return { ok: true, values: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { ok: false, error: 'The state edits must be a JSON object, e.g. {"requested": 10000}.' };
  }
  const unknown = Object.keys(parsed).filter((k) => !channels.includes(k));
  if (unknown.length > 0) {
    return {
      ok: false,
      error: `These keys cannot be set: ${unknown.join(", ")}. Allowed: ${channels.join(", ")}.`,
    };
  }
  return {
    ok: true,
    values: Object.keys(parsed).length > 0 ? (parsed as Record<string, unknown>) : undefined,
  };
}
