import "server-only";
import { errorCodeOf } from "@/lib/contract/errors";
import { type DatabaseFault, databaseFault } from "@/lib/platform/database-faults";
import { errorFields, logger } from "@/lib/platform/observability/logger";
import { peekSingleton, setSingleton } from "@/lib/platform/singleton";
import type { Database } from "./open";

export interface DatabaseHealth {
  ok: boolean;
  database: "postgres" | "pglite" | "unavailable";
  /** Round trip of `SELECT 1`, in milliseconds. */
  latencyMs?: number;
  /** Stable code when unhealthy (busy: it answers, but not within the limit); the error is logged, not returned. */
  code?: "unavailable:database" | "unavailable:database_busy";
  /** Embedded database: statements waiting for its one connection now. */
  waiting?: number;
  /** Why it is unhealthy, as `lib/platform/database-faults.ts` reads the driver's error (no database details). */
  fault?: DatabaseFault["reason"] | "timeout";
}

/** Whether the last check failed (process-wide: the health route and instrumentation.ts may be bundled apart). */
const FAILING = "health-failing";

/**
 * Open (and migrate) the database if needed, then run one trivial query. A failure is logged when the database
 * stops answering, not at every probe of a load balancer; the next success says it is back.
 */
export async function checkDatabase({
  opening,
  timeoutMs = 5_000,
}: {
  /** The probe's open of the database (the promise getDatabase returns), not awaited yet: the open counts against the limit. */
  opening: Promise<Database>;
  timeoutMs?: number;
}): Promise<DatabaseHealth> {
  const started = performance.now();
  let database: Database | undefined;
  try {
    database = await withTimeout(opening, timeoutMs);
    await withTimeout(database.sql.query("SELECT 1"), timeoutMs);
    if (peekSingleton<boolean>(FAILING)) logger().info("health: the database answers again");
    setSingleton(FAILING, false);
    return {
      ok: true,
      database: database.kind,
      latencyMs: Math.round((performance.now() - started) * 10) / 10,
    };
  } catch (error) {
    if (!peekSingleton<boolean>(FAILING)) {
      logger().error(errorFields(error), "health: database check failed");
    }
    setSingleton(FAILING, true);
    // Opened, but the statement waited past its limit: busy (a long or stuck transaction), not unreachable.
    const fault = databaseFault(error);
    const busy =
      fault?.kind === "busy" ||
      (database !== undefined && (errorCodeOf(error) === "unavailable:database_busy" || isTimeout(error)));
    return {
      ok: false,
      database: "unavailable",
      code: busy ? "unavailable:database_busy" : "unavailable:database",
      ...(fault ? { fault: fault.reason } : isTimeout(error) ? { fault: "timeout" as const } : {}),
      ...(database?.gate ? { waiting: database.gate.waiting } : {}),
    };
  }
}

const TIMED_OUT = "health check timed out";

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith(TIMED_OUT);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${TIMED_OUT} after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
