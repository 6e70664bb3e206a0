import { AppError } from "@/lib/contract/errors";

/**
 * What went wrong below the app, read from a driver error by its codes: SQLSTATE from the server, errno from the
 * socket, and — for the few failures `pg` and `pg-pool` report without any code — their fixed wording. Never by class
 * (`instanceof`): bundles duplicate classes, and Drizzle wraps the driver's error in its own (`cause`).
 *
 * - `unavailable`: the database cannot be reached or is not taking work now — refused or cut connections, a server
 *   shutting down or starting up (a failover's old and new primary), a standby refusing writes, no connection slot
 *   left. Nothing the request did was committed; the same request may be sent again in a moment.
 * - `busy`: it answers, but not within the limits — no pooled connection free within `DATABASE_WAIT_MS`, a statement
 *   past `DATABASE_STATEMENT_TIMEOUT_MS` (a row lock that never returns ends here), a lock not granted in time.
 */
export type DatabaseFault =
  | { kind: "unavailable"; reason: UnavailableReason }
  | { kind: "busy"; reason: "pool" | "statement_timeout" | "lock_timeout" };

export type UnavailableReason =
  | "unreachable"
  | "connection_lost"
  | "shutting_down"
  | "starting_up"
  | "read_only"
  | "too_many_connections";

/** SQLSTATEs of a server that is going away, coming up, or out of connection slots. */
const UNAVAILABLE_SQLSTATE: Record<string, UnavailableReason> = {
  "57P01": "shutting_down", // admin_shutdown: terminated by a fast or immediate stop (a failover's old primary)
  "57P02": "shutting_down", // crash_shutdown: another backend crashed, this one is restarting
  "57P03": "starting_up", // cannot_connect_now: starting up, in recovery, or shutting down
  "57P05": "connection_lost", // idle_session_timeout
  "53300": "too_many_connections",
  "53400": "too_many_connections", // configuration_limit_exceeded
  "25006": "read_only", // read_only_sql_transaction: the address still points at a standby
  "08000": "connection_lost",
  "08001": "unreachable",
  "08003": "connection_lost",
  "08004": "unreachable", // the server rejected the connection
  "08006": "connection_lost",
};

/** Socket errnos: the host refused, reset or never answered. */
const UNAVAILABLE_ERRNO: Record<string, UnavailableReason> = {
  ECONNREFUSED: "unreachable",
  ECONNRESET: "connection_lost",
  EPIPE: "connection_lost",
  ETIMEDOUT: "unreachable",
  EHOSTUNREACH: "unreachable",
  ENETUNREACH: "unreachable",
  ENOTFOUND: "unreachable",
  EAI_AGAIN: "unreachable",
};

/** What `pg` and `pg-pool` say when a connection ends or was never made; they give these no code. */
const UNAVAILABLE_WORDING: [string, UnavailableReason][] = [
  ["Connection terminated", "connection_lost"],
  ["Client has encountered a connection error and is not queryable", "connection_lost"],
  ["Client was closed and is not queryable", "connection_lost"],
  ["Connection terminated due to connection timeout", "unreachable"],
  // PgBouncer's own refusals, sent as plain errors (SQLSTATE 08P01) with these words.
  ["no more connections allowed", "too_many_connections"],
  ["server conn crashed", "connection_lost"],
  ["pgbouncer cannot connect to server", "unreachable"],
  ["server login failed", "unreachable"],
  ["query_wait_timeout", "unreachable"],
  ["database is shutting down", "shutting_down"],
];

/** The driver error behind `error` and the chain of its causes (Drizzle, LangGraph and our own code wrap it). */
function* causes(error: unknown): Generator<Record<string, unknown>> {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth += 1) {
    yield current as Record<string, unknown>;
    const { cause, errors } = current as { cause?: unknown; errors?: unknown };
    // An AggregateError (a connect that tried several addresses) holds the socket errors in `errors`.
    if (Array.isArray(errors)) for (const inner of errors) yield* causes(inner);
    current = cause;
  }
}

/** The database fault `error` is, or null when it is something else (a bug, a constraint, a refusal of ours). */
export function databaseFault(error: unknown): DatabaseFault | null {
  for (const e of causes(error)) {
    const code = typeof e.code === "string" ? e.code : undefined;
    const message = typeof e.message === "string" ? e.message : "";
    if (code === "57014") return { kind: "busy", reason: "statement_timeout" };
    if (code === "55P03") return { kind: "busy", reason: "lock_timeout" };
    if (message.includes("timeout exceeded when trying to connect")) return { kind: "busy", reason: "pool" };
    const bySqlstate = code ? UNAVAILABLE_SQLSTATE[code] : undefined;
    if (bySqlstate) return { kind: "unavailable", reason: bySqlstate };
    const byErrno = code ? UNAVAILABLE_ERRNO[code] : undefined;
    if (byErrno) return { kind: "unavailable", reason: byErrno };
    const byWords = UNAVAILABLE_WORDING.find(([words]) => message.includes(words));
    if (byWords) return { kind: "unavailable", reason: byWords[1] };
  }
  return null;
}

/** Whether `error` says the database is unreachable or not taking work (not merely slow). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return databaseFault(error)?.kind === "unavailable";
}

/** How long a client should wait before sending a request refused for an unavailable database again. */
const RETRY_AFTER_SECONDS = 2;

/** A database fault as the AppError a request answers with (503, a stable code, never the driver's words). */
export function databaseFaultError(error: unknown): AppError | null {
  const fault = databaseFault(error);
  if (!fault) return null;
  if (fault.kind === "busy") {
    const message =
      fault.reason === "pool"
        ? "No database connection was free in time. Try again."
        : fault.reason === "lock_timeout"
          ? "A record this needs is held by another transaction. Try again."
          : "A database statement took too long. Try again.";
    return new AppError("unavailable:database_busy", message, { reason: fault.reason });
  }
  return new AppError(
    "unavailable:database",
    fault.reason === "too_many_connections"
      ? "The database has no free connection. Try again in a moment."
      : "The database is not answering (it may be restarting or failing over). Try again in a moment.",
    { reason: fault.reason, retryAfterSeconds: RETRY_AFTER_SECONDS },
  );
}

/**
 * `work`, again with back-off (doubling from `initialMs` up to 2 s) while it fails on a database fault, for up to
 * `withinMs` from the first failure: how a stream, a delivery's record and a run's release ride out a failover. Any
 * other error, an aborted `signal` or the time being up: thrown. `onBack` hears how long it waited, once it answers.
 */
export async function retryingDatabaseFaults<T>(
  work: () => Promise<T>,
  {
    withinMs,
    initialMs = 100,
    signal,
    onBack,
  }: { withinMs: number; initialMs?: number; signal?: AbortSignal; onBack?: (waitedMs: number) => void },
): Promise<T> {
  let since: number | null = null;
  let delayMs = initialMs;
  for (;;) {
    try {
      const value = await work();
      if (since !== null) onBack?.(Math.round(performance.now() - since));
      return value;
    } catch (error) {
      if (!databaseFault(error) || signal?.aborted) throw error;
      since ??= performance.now();
      if (performance.now() - since + delayMs > withinMs) throw error;
      // Not what keeps the process alive: a stopping process does not wait for a retry.
      await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
      delayMs = Math.min(2_000, delayMs * 2);
    }
  }
}
