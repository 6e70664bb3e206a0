import "server-only";
import "@/lib/agents";
import { ensureFirstAdmin, seedDemoUsers } from "@/lib/auth/bootstrap";
import { getDatabase } from "@/lib/db/client";
import { seedDemoOrders } from "@/lib/db/seed/demo-orders";
import { startDispatcher } from "@/lib/effects/dispatcher";
import { env } from "@/lib/env";
import { seedDemoThreads } from "@/lib/runtime/demo";
import { startEventListener } from "@/lib/runtime/listener";
import { startRecovery } from "@/lib/runtime/recovery";

/**
 * Server start-up: open and migrate the database, and make sure the demo shop's orders exist (the refund agent
 * looks orders up there). If the database is down the server still starts (health answers 503 and every request
 * retries the connection) rather than refusing all traffic with a crashed start hook.
 */
export async function startServer(): Promise<void> {
  try {
    const database = await getDatabase();
    if (env.DEMO_ORDERS) await seedDemoOrders({ db: database.db });
    console.log(`[start] database ready (${database.kind})`);
    // Accounts are not the runtime: a failure here is reported and must not keep recovery from starting.
    await ensureFirstAdmin().catch((e) => console.error("[auth] first admin not created:", e));
    await seedDemoUsers().catch((e) => console.error("[demo] demo operators not created:", e));
    if (database.kind === "postgres") await startEventListener();
    await startRecovery();
    // Side effects recorded by runs (payments, email) leave the process here, on every instance.
    await startDispatcher();
    if (env.DEMO_THREADS) void seedDemoThreads().catch((e) => console.error("[demo] seeding failed:", e));
  } catch (error) {
    console.error(
      "[start] database unavailable, will retry on the next request:",
      error instanceof Error ? error.message : error,
    );
  }
}
