/** Where safeNext sends anything it refuses. */
export const DEFAULT_NEXT = "/";

/** Origin to resolve against: any origin works, only "did it stay on it" is asked. */
const PROBE_ORIGIN = "https://console.invalid";

/**
 * The path to go to after signing in, if `value` is a path on this site; otherwise `/`. Isomorphic and pure.
 *
 * Browsers read `\` as `/` and drop tabs and newlines anywhere in a URL, so `/\evil.example` and
 * `/%09/evil.example` (a tab once decoded) both become `//evil.example`: another host. Such values, and anything with
 * a control character or a backslash, are refused outright; the rest is resolved against an origin and kept only if
 * it stays on it, then returned as path + query + fragment (normalized, never with a host).
 */
export function safeNext(value: unknown): string {
  if (typeof value !== "string" || value.length > 2048) return DEFAULT_NEXT;
  if (!value.startsWith("/") || value.startsWith("//")) return DEFAULT_NEXT;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\\\u0000-\u001f\u007f-\u009f]/.test(value)) return DEFAULT_NEXT;
  let url: URL;
  try {
    url = new URL(value, PROBE_ORIGIN);
  } catch {
    return DEFAULT_NEXT;
  }
  if (url.origin !== PROBE_ORIGIN) return DEFAULT_NEXT;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith("//") ? DEFAULT_NEXT : path;
}
