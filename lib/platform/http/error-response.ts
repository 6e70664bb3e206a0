import "server-only";
import { appErrorResponse, toAppError } from "@/lib/contract/errors";
import { databaseFaultError } from "@/lib/platform/database-faults";
import { errorFields, logger, logUnexpected } from "@/lib/platform/observability/logger";
import { metrics } from "@/lib/platform/observability/metrics";

/**
 * The JSON response for an error thrown in a route handler. An AppError answers with its own status and code; a
 * database fault (`lib/db/faults.ts`) answers 503 with a stable code — `unavailable:database` (unreachable, failing
 * over, out of connections: with `Retry-After`) or `unavailable:database_busy` (it did not answer in time) — and is
 * logged as a warning; anything else is logged (`logUnexpected`) and answered with a generic 500 that names nothing
 * of it.
 */
export function errorResponse(error: unknown, context = "request"): Response {
  const fault = databaseFaultError(error);
  if (fault) {
    logger().warn(
      { context, code: fault.code, reason: fault.details?.reason, ...errorFields(error) },
      fault.code === "unavailable:database" ? "database unavailable" : "database wait exceeded",
    );
    metrics().databaseFaults.inc({ code: fault.code, reason: String(fault.details?.reason ?? "unknown") });
    return appErrorResponse(fault);
  }
  const appError = toAppError(error, (e) => logUnexpected(e, context));
  if (appError.code === "unavailable:database_busy") {
    logger().warn({ context, code: appError.code, details: appError.details }, "database wait exceeded");
  }
  return appErrorResponse(appError);
}
