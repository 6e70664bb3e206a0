/**
 * The pages' Content-Security-Policy. Scripts run only with this response's nonce (Next puts it on its own bootstrap
 * and chunk scripts when it finds it in the request's policy header); `'strict-dynamic'` lets those load the chunks
 * they import. No `'unsafe-inline'` for scripts; styles keep it (Next and React inject style attributes). Development
 * adds `'unsafe-eval'` for React's dev tooling.
 */
export function pageContentSecurityPolicy({ nonce, dev }: { nonce: string; dev: boolean }): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** API responses are data, never documents: nothing may load or frame them. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** A fresh nonce: 128 random bits, base64. */
export function newNonce(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
}

/** The request header proxy.ts sets on a page request: its path and query, for a page that must send the reader back. */
export const PAGE_PATH_HEADER = "x-hitl-page-path";
