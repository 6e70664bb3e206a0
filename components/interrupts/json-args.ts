/**
 * The last fallback of an edit form: a reviewed call whose tool declares no argument schema is edited as JSON text.
 * Read here, on the page, before anything is sent: its arguments (a JSON object), or what is wrong with the text, in
 * words, shown at the field.
 */
export function readJsonArgs(
  text: string,
): { ok: true; args: Record<string, unknown> } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const detail = e instanceof Error ? e.message : "it cannot be read";
    return { ok: false, error: `Not valid JSON: ${detail}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, error: 'The arguments must be one JSON object, such as {"name": "value"}.' };
  return { ok: true, args: value as Record<string, unknown> };
}
