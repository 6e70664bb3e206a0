import type { z } from "zod";
import { AppError, type ErrorCode } from "./errors";

/** Read a JSON body, or throw `bad_request:json`. */
export async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.length > 1_000_000)
    throw new AppError("bad_request:too_large", "The request body is larger than 1 MB.");
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("bad_request:json", "The request body is not valid JSON.");
  }
}

/** Parse with a zod schema, or throw `code` with the schema's explanation. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, code: ErrorCode, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ");
  throw new AppError(code, `${what} is not valid: ${problems}`);
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
