import type { z } from "zod";
import { AppError, type ErrorCode } from "../../contract/errors";
import { issuePaths, issuesMessage } from "../../contract/wire";

/** Largest request body any route reads (a RunAgentInput with a long conversation fits well below it). */
export const MAX_BODY_BYTES = 256 * 1024;
/** Deepest JSON nesting any route accepts (our largest body, a RunAgentInput, nests about 8 levels). */
export const MAX_JSON_DEPTH = 32;

/**
 * Read a request body as UTF-8 text, refusing it while it streams in once it passes `limit` bytes (413
 * `bad_request:too_large` is raised before the rest is read, so a 100 MB body costs at most `limit` bytes of memory).
 * A declared `Content-Length` above the limit is refused without reading anything.
 */
export async function readBodyText(request: Request, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new AppError("bad_request:encoding", "The request body is not valid UTF-8.");
  }
}

function tooLarge(limit: number): AppError {
  return new AppError("payload_too_large:body", `The request body is larger than ${limit / 1024} KB.`, {
    limitBytes: limit,
  });
}

/** Refuse a body that is not declared as JSON (415): a `text/plain` form post must not pass for JSON. */
export function assertJsonContentType(request: Request): void {
  const type = (request.headers.get("content-type") ?? "").split(";", 1)[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    throw new AppError("unsupported_media_type:body", "Send the request body as application/json.", {
      contentType: type || null,
    });
  }
}

/**
 * Read a JSON body: JSON content type (415), size limit while reading (413), valid JSON (400 `bad_request:json`),
 * nesting at most MAX_JSON_DEPTH (400 `bad_request:json_depth`), no NUL character in any key or string (400
 * `bad_request:nul`: Postgres text and jsonb cannot hold one), and no lone UTF-16 surrogate (`"\udfff"` is valid JSON,
 * but jsonb refuses it and text stores it altered: 400 `bad_request:unicode`).
 */
export async function readJson(request: Request, limit = MAX_BODY_BYTES): Promise<unknown> {
  assertJsonContentType(request);
  return parseJsonText(await readBodyText(request, limit));
}

/** JSON text a request sent → its value, with the checks of {@link readJson} (depth, syntax, NUL, lone surrogates). */
export function parseJsonText(text: string): unknown {
  // Depth is checked on the text first: JSON.parse of 100k nested arrays is itself a stack risk.
  if (jsonTextDepth(text) > MAX_JSON_DEPTH) {
    throw new AppError(
      "bad_request:json_depth",
      `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError("bad_request:json", "The request body is not valid JSON.");
  }
  if (containsNul(value)) {
    throw new AppError("bad_request:nul", "The request body contains a NUL character.");
  }
  if (containsLoneSurrogate(value)) {
    throw new AppError(
      "bad_request:unicode",
      "The request body contains a lone UTF-16 surrogate (an escape such as \\udfff that is no character).",
    );
  }
  return value;
}

/** Deepest bracket nesting of a JSON text (brackets inside strings do not count). */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}

/** Whether any string or key of a parsed JSON value contains U+0000. */
export function containsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some(containsNul);
  if (value && typeof value === "object") {
    return Object.entries(value).some(([k, v]) => k.includes("\u0000") || containsNul(v));
  }
  return false;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether any string or key of a parsed JSON value holds a UTF-16 surrogate that is not half of a pair. */
export function containsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(containsLoneSurrogate);
  if (value && typeof value === "object") {
    return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || containsLoneSurrogate(v));
  }
  return false;
}

/** Parse with a zod schema, or throw `code` with the schema's explanation. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, code: ErrorCode, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new AppError(code, `${what} is not valid: ${issuesMessage(parsed.error, "body")}`, {
    fields: issuePaths(parsed.error, "body"),
  });
}

/**
 * Refuse a state-changing request that a browser sent from another site (`Origin` of a different host, or
 * `Sec-Fetch-Site: cross-site`): a page elsewhere must not be able to start runs or decide through an operator's
 * browser. Requests without those headers (servers, scripts, tests) are not browsers' cross-site requests.
 */
export function assertSameOrigin(request: Request): void {
  const site = request.headers.get("sec-fetch-site");
  const origin = request.headers.get("origin");
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
  let crossOrigin = false;
  if (origin && origin !== "null") {
    try {
      crossOrigin = new URL(origin).host !== host;
    } catch {
      crossOrigin = true;
    }
  } else if (origin === "null") crossOrigin = true;
  if (site === "cross-site" || crossOrigin) {
    throw new AppError("forbidden:cross_site", "Cross-site requests may not change anything here.");
  }
}
