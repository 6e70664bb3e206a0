const encoder = new TextEncoder();

/** Answers shorter than this are not worth compressing (the `compression` middleware's own threshold). */
const COMPRESS_FROM_BYTES = 1024;

/**
 * A JSON response that `next start` compresses only when it is worth it. Next gzips every response whose length it
 * does not know — and it does not pass on a length a route handler declares — so an answer of a few dozen bytes paid
 * for a zlib stream of its own and came out longer than it went in. A short answer is marked `no-transform` (which
 * the compression middleware honours); a long one is still compressed for a client that asks.
 */
export function jsonResponse(
  body: unknown,
  init: { status?: number; headers?: Record<string, string> } = {},
): Response {
  const bytes = encoder.encode(JSON.stringify(body));
  const headers: Record<string, string> = { "content-type": "application/json", ...init.headers };
  if (bytes.byteLength < COMPRESS_FROM_BYTES) {
    const cacheControl = headers["cache-control"];
    headers["cache-control"] = cacheControl ? `${cacheControl}, no-transform` : "no-transform";
  }
  return new Response(bytes, { status: init.status ?? 200, headers });
}
