import "server-only";
import { AppError, type ErrorCode, toAppError } from "@/lib/errors";
import { logUnexpected } from "@/lib/observability/logger";

/**
 * An error as an AppError, also when it was thrown by a copy of lib/errors bundled into another chunk (the runtime's
 * policy code is bundled apart from the route that calls it, so `instanceof` alone misses its refusals).
 */
export function asAppError(error: unknown, context: string): AppError {
  if (error instanceof AppError) return error;
  const e = error as { name?: unknown; code?: unknown; message?: unknown; details?: unknown } | null;
  if (e && e.name === "AppError" && typeof e.code === "string" && e.code.includes(":")) {
    return new AppError(
      e.code as ErrorCode,
      typeof e.message === "string" ? e.message : e.code,
      (e.details ?? undefined) as Record<string, unknown> | undefined,
    );
  }
  return toAppError(error, (e) => logUnexpected(e, context));
}
