import "server-only";
import { appErrorResponse, toAppError } from "@/lib/errors";
import { logUnexpected } from "@/lib/observability/logger";

/**
 * The JSON response for an error thrown in a route handler. An AppError answers with its own status and code; anything
 * else is logged (`logUnexpected`) and answered with a generic 500 that names nothing of it.
 */
export function errorResponse(error: unknown, context = "request"): Response {
  return appErrorResponse(toAppError(error, (e) => logUnexpected(e, context)));
}
