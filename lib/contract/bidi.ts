/*
 * User-supplied text next to identity or amounts: bidi controls in it (U+202E RIGHT-TO-LEFT OVERRIDE and friends)
 * could reorder what follows — "by operator@…" read backwards. The console isolates such text (`<bdi>`) and shows the
 * controls instead of obeying them.
 */

/** Bidi embedding, override, isolate and mark characters. */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** The text with every bidi control shown as a visible marker (e.g. "[U+202E]") instead of applied. */
export function showControls(text: string): string {
  return text.replace(
    BIDI_CONTROLS,
    (c) => `[U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}]`,
  );
}

/** Whether the text carries a bidi control. */
export function hasBidiControls(text: string): boolean {
  return new RegExp(BIDI_CONTROLS.source).test(text);
}
