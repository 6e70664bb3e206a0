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
