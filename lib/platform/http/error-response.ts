import "server-only";
import { AppError, appErrorResponse, toAppError } from "@/lib/contract/errors";
import { errorFields, logger, logUnexpected } from "@/lib/platform/observability/logger";

/**
 * The JSON response for an error thrown in a route handler. An AppError answers with its own status and code; a
 * database that did not answer in time answers 503 with a code (and is logged); anything else is logged
 * (`logUnexpected`) and answered with a generic 500 that names nothing of it.
 */
export function errorResponse(error: unknown, context = "request"): Response {
  const busy = databaseWaitError(error);
  if (busy) {
    logger().warn({ context, ...errorFields(error) }, "database wait exceeded");
    return appErrorResponse(busy);
  }
  const appError = toAppError(error, (e) => logUnexpected(e, context));
  if (appError.code === "unavailable:database_busy") {
    logger().warn({ context, code: appError.code, details: appError.details }, "database wait exceeded");
  }
  return appErrorResponse(appError);
}

/**
 * A driver error that means "the database did not answer in time", as an AppError: the pool gave no connection
 * within `DATABASE_WAIT_MS` (pg-pool says so in words; it has no code), or a statement ran past
 * `DATABASE_STATEMENT_TIMEOUT_MS` (SQLSTATE 57014).
 */
export function databaseWaitError(error: unknown): AppError | null {
  const cause = (error as { cause?: unknown } | null)?.cause ?? error;
  for (const e of [error, cause]) {
    const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
    if (code === "57014") {
      return new AppError("unavailable:database_busy", "A database statement took too long. Try again.", {
        reason: "statement_timeout",
      });
    }
    if (typeof message === "string" && message.includes("timeout exceeded when trying to connect")) {
      return new AppError(
        "unavailable:database_busy",
        "No database connection was free in time. Try again.",
        {
          reason: "pool",
        },
      );
    }
  }
  return null;
}
