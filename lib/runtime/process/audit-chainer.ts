import "server-only";
import { getDatabase } from "@/lib/db/client";
import { chainAuditTrail } from "@/lib/db/queries/audit";
import { env } from "@/lib/platform/env";
import { errorFields, logger } from "@/lib/platform/observability/logger";

/*
 * The audit trail's chainer (migration audit_chain_after_commit). An audited transaction only digests its rows; every
 * AUDIT_CHAIN_MS each instance links what has committed since into the hash chain, in batches, one instance at a time
 * (a busy chainer elsewhere is left to it: this tick does nothing). Verifying the trail chains first, so a check never
 * waits for a tick; a row left unchained 5 minutes after its insert is reported by `audit_log_verify()`.
 */

const KEY = Symbol.for("hitl-console.audit-chainer");
type G = typeof globalThis & { [KEY]?: { timer: NodeJS.Timeout; running: boolean } };

/** Start this process's chainer (idempotent). */
export function startAuditChainer(): void {
  const g = globalThis as G;
  if (g[KEY]) return;
  const state = { timer: setInterval(() => void chainOnce(), env.AUDIT_CHAIN_MS), running: false };
  state.timer.unref();
  g[KEY] = state;
}

/** One tick: link what has committed, unless this process is still at the previous tick. How many rows it linked. */
export async function chainOnce(): Promise<number> {
  const state = (globalThis as G)[KEY];
  if (state?.running) return 0;
  if (state) state.running = true;
  try {
    const { db } = await getDatabase();
    return await chainAuditTrail({ db, wait: false });
  } catch (error) {
    // The rows stay unchained and are linked on a later tick; verification reports them only once they are late.
    logger().warn(errorFields(error), "audit: chaining failed");
    return 0;
  } finally {
    if (state) state.running = false;
  }
}
