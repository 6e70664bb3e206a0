import "server-only";
import { getDatabase } from "@/lib/db/client";
import { chainAuditTrail } from "@/lib/db/queries/audit";
import { env } from "@/lib/platform/env";
import { peekSingleton, singleton } from "@/lib/platform/singleton";
import { reportReachable, reportTaskFailure } from "@/lib/platform/status";

/*
 * The audit trail's chainer (migration audit_chain_after_commit). An audited transaction only digests its rows; every
 * AUDIT_CHAIN_MS each instance links what has committed since into the hash chain, in batches, one instance at a time
 * (a busy chainer elsewhere is left to it: this tick does nothing). Verifying the trail chains first, so a check never
 * waits for a tick; a row left unchained 5 minutes after its insert is reported by `audit_log_verify()`.
 */

/** This process's chainer once started (process-wide: one timer however often the module is bundled). */
const CHAINER = "audit-chainer";
interface Chainer {
  timer: NodeJS.Timeout;
  running: boolean;
}

/** Start this process's chainer (idempotent). */
export function startAuditChainer(): void {
  singleton<Chainer>(CHAINER, () => {
    const state = { timer: setInterval(() => void chainOnce(), env.AUDIT_CHAIN_MS), running: false };
    state.timer.unref();
    return state;
  });
}

/** One tick: link what has committed, unless this process is still at the previous tick. How many rows it linked. */
export async function chainOnce(): Promise<number> {
  const state = peekSingleton<Chainer>(CHAINER);
  if (state?.running) return 0;
  if (state) state.running = true;
  try {
    const { db } = await getDatabase();
    const linked = await chainAuditTrail({ db, wait: false });
    reportReachable("audit chainer");
    return linked;
  } catch (error) {
    // The rows stay unchained and are linked on a later tick; verification reports them only once they are late.
    reportTaskFailure("audit chainer", error, "audit: chaining failed");
    return 0;
  } finally {
    if (state) state.running = false;
  }
}
