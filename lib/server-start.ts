import "server-only";
import { getDatabase } from "@/lib/db/client";

/**
 * Server start-up: open and migrate the database. If the database is down the server still starts (health answers
 * 503 and every request retries the connection) rather than refusing all traffic with a crashed start hook.
 */
export async function startServer(): Promise<void> {
  try {
    const database = await getDatabase();
    console.log(`[start] database ready (${database.kind})`);
  } catch (error) {
    console.error(
      "[start] database unavailable, will retry on the next request:",
      error instanceof Error ? error.message : error,
    );
  }
}
