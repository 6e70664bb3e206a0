import { jsonResponse } from "./json-response";

/**
 * One error model for HTTP responses, AG-UI `RUN_ERROR` events and the browser. A code is `type:subject`
 * (e.g. `conflict:interrupt_resolved`); the HTTP status derives from the type. Database details are logged, never
 * sent. Isomorphic: the client rebuilds the same error from a response body or a RUN_ERROR event.
 */
export type ErrorType =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unprocessable"
  | "rate_limited"
  | "unavailable"
  | "internal";

export type ErrorCode = `${ErrorType}:${string}`;

const STATUS: Record<ErrorType, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

/** JSON body of an error response. `details` carries structured context (who decided, which ids are missing…). */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  get type(): ErrorType {
    return this.code.split(":", 1)[0] as ErrorType;
  }

  get status(): number {
    return STATUS[this.type] ?? 500;
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }

  /** Rebuild an error from a response body or a RUN_ERROR event (client side). */
  static fromBody(body: unknown, fallbackStatus?: number): AppError {
    if (
      body &&
      typeof body === "object" &&
      "code" in body &&
      typeof body.code === "string" &&
      body.code.includes(":")
    ) {
      const b = body as Partial<ErrorBody>;
      return new AppError(b.code as ErrorCode, String(b.message ?? b.code), b.details);
    }
    const type = Object.entries(STATUS).find(([, s]) => s === fallbackStatus)?.[0] ?? "internal";
    return new AppError(`${type as ErrorType}:unknown`, "Unexpected error");
  }
}

/**
 * The AppError a thrown value is, read by its shape and code — never by class identity: Next.js bundles a module into
 * several chunks, so an AppError thrown by an agent's policy may be an instance of another copy of this class, and
 * `instanceof` would turn its 403 into a 500. An error that wraps one (`cause`) is read as the one it wraps. Null when
 * it is not one.
 */
export function appErrorOf(error: unknown, depth = 0): AppError | null {
  if (typeof error !== "object" || error === null) return null;
  const e = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    details?: unknown;
    cause?: unknown;
  };
  // A driver or ORM wraps what a statement threw (Drizzle's "Failed query" keeps it as `cause`).
  if (e.name !== "AppError" || !isErrorCode(e.code)) return depth < 3 ? appErrorOf(e.cause, depth + 1) : null;
  if (Object.getPrototypeOf(error) === AppError.prototype) return error as AppError;
  const details =
    typeof e.details === "object" && e.details !== null ? (e.details as Record<string, unknown>) : undefined;
  return new AppError(e.code, typeof e.message === "string" ? e.message : e.code, details);
}

/** The error code of a thrown AppError (of any bundle's copy), or undefined. */
export function errorCodeOf(error: unknown): ErrorCode | undefined {
  return appErrorOf(error)?.code;
}

/** Whether `value` is a code of our error model (`type:subject` with a known type). */
export function isErrorCode(value: unknown): value is ErrorCode {
  if (typeof value !== "string") return false;
  const at = value.indexOf(":");
  return at > 0 && at < value.length - 1 && Object.hasOwn(STATUS, value.slice(0, at));
}

/**
 * Anything thrown → an AppError safe to show. An error that is not an AppError is reported generically; the server
 * passes `onUnexpected` to log it (`lib/platform/http/error-response.ts`), since this module is shared with the browser and has no
 * logger of its own.
 */
export function toAppError(error: unknown, onUnexpected?: (error: unknown) => void): AppError {
  const known = appErrorOf(error);
  if (known) return known;
  onUnexpected?.(error);
  return new AppError("internal:unexpected", "Something went wrong on the server. The error was logged.");
}

/**
 * The JSON response for an AppError (the server's `errorResponse` maps anything thrown to one first). A refusal that
 * knows when to try again (`details.retryAfterSeconds`) says so in `Retry-After` too.
 */
export function appErrorResponse(appError: AppError): Response {
  const retryAfter = appError.details?.retryAfterSeconds;
  return jsonResponse(appError.toBody(), {
    status: appError.status,
    headers: {
      "cache-control": "no-store",
      // A body refused mid-stream is left unread on the connection: the client must not send its next request on it.
      ...(appError.status === 413 ? { connection: "close" } : {}),
      ...(typeof retryAfter === "number" && retryAfter > 0
        ? { "retry-after": String(Math.ceil(retryAfter)) }
        : {}),
    },
  });
}
