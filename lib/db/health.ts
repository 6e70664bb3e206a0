import "server-only";
import { errorFields, logger } from "@/lib/observability/logger";
import { getDatabase } from "./client";

export interface DatabaseHealth {
  ok: boolean;
  database: "postgres" | "pglite" | "unavailable";
  /** Round trip of `SELECT 1`, in milliseconds. */
  latencyMs?: number;
  /** Stable code when unhealthy; the underlying error is logged, not returned. */
  code?: "unavailable:database";
}

const KEY = Symbol.for("hitl-console.health-failing");
type G = typeof globalThis & { [KEY]?: boolean };

/**
 * Open (and migrate) the database if needed, then run one trivial query. A failure is logged when the database
 * stops answering, not at every probe of a load balancer; the next success says it is back.
 */
export async function checkDatabase(timeoutMs = 5_000): Promise<DatabaseHealth> {
  const g = globalThis as G;
  const started = performance.now();
  try {
    const database = await withTimeout(getDatabase(), timeoutMs);
    await withTimeout(database.sql.query("SELECT 1"), timeoutMs);
    if (g[KEY]) logger().info("health: the database answers again");
    g[KEY] = false;
    return {
      ok: true,
      database: database.kind,
      latencyMs: Math.round((performance.now() - started) * 10) / 10,
    };
  } catch (error) {
    if (!g[KEY]) {
      logger().error(errorFields(error), "health: database check failed");
    }
    g[KEY] = true;
    return { ok: false, database: "unavailable", code: "unavailable:database" };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
