import "server-only";
import { type AppError, toAppError } from "@/lib/contract/errors";
import { logUnexpected } from "@/lib/platform/observability/logger";

/**
 * An error as an AppError (by its code, whichever bundle's copy of lib/errors threw it); anything else is logged
 * under `context` and answered generically.
 */
export function asAppError(error: unknown, context: string): AppError {
  return toAppError(error, (e) => logUnexpected(e, context));
}
