import "server-only";
import { sql } from "drizzle-orm";
import type { Principal } from "@/lib/contract/roles";
import { getDatabase } from "@/lib/db/client";
import type { AppDb, Database } from "@/lib/db/open";
import { recordAudit } from "@/lib/db/queries/audit";
import { deleteExpiredClaims } from "@/lib/db/queries/claims";
import { escalateOverdue, listDueTimers, listExpiring, markExpiryFailed } from "@/lib/db/queries/deadlines";
import { pruneInboxChanges } from "@/lib/db/queries/inbox-changes";
import {
  enqueueNotifications,
  listRecentlyFailedEffects,
  listRecentlyRaised,
} from "@/lib/db/queries/notifications";
import { env } from "@/lib/platform/env";
import { clearSingleton, peekSingleton, singleton } from "@/lib/platform/singleton";
import { isDraining, reportReachable, reportTaskFailure } from "@/lib/platform/status";
import { decideAndResume } from "@/lib/runtime/runs/decide";
import { deliverNotifications } from "../delivery/notify";
import { asAppError } from "./app-error";

/** Who applies expiry answers: recorded in the ledger and the audit trail like any decider. No more than an operator. */
export const EXPIRY_PRINCIPAL: Principal = {
  kind: "system",
  id: "system:expiry",
  label: "system:expiry",
  role: "operator",
};
const DEADLINES_ACTOR = { id: "system:deadlines", label: "system:deadlines", role: null };

/** Who fires a durable timer whose time is up (a `wait_timer` question): in the ledger and the audit trail. */
export const TIMER_PRINCIPAL: Principal = {
  kind: "system",
  id: "system:timer",
  label: "system:timer",
  role: "operator",
};

/** Arbitrary but fixed: the transaction lock of the one instance sweeping deadlines at a time. */
const SWEEP_LOCK_KEY = 7_311_842_014;

/**
 * One pass over the deadlines, run by every instance on a timer; one at a time does the work (a transaction-level
 * advisory lock; the others skip this round). Overdue pending decisions are escalated — `escalated_at` set by
 * compare-and-set, with the audit entry and the `overdue`/`escalated` notifications in the same transaction, so an
 * item escalates exactly once whatever crashes when. Then the expiry answers of escalated items are applied as
 * decisions of `system:expiry` through `decideAndResume` (the ledger's compare-and-set: recorded at most once; an
 * attempt cut short by a crash is simply made again on the next pass, as the item is still pending). An answer the
 * contract or the policy refuses is marked and left to a person.
 */
export async function sweepDeadlines({
  database,
}: {
  /** The whole handle: an expiry answer or a fired timer may start the resume run. */
  database: Database;
}): Promise<{ escalated: number; expired: number; fired: number }> {
  const { db } = database;
  const escalated = await db.transaction(async (tx) => {
    const [lock] = await tx
      .execute(sql`SELECT pg_try_advisory_xact_lock(${SWEEP_LOCK_KEY}) AS ok`)
      .then(rowsOf);
    if (!(lock as { ok?: boolean } | undefined)?.ok) return null;
    const items = await escalateOverdue({ db: tx });
    await recordAudit({
      db: tx,
      entries: items.map((item) => ({
        action: "decision_escalated" as const,
        actor: DEADLINES_ACTOR,
        threadId: item.threadId,
        interruptId: item.interruptId,
        detail: { dueAt: item.dueAt, action: item.action },
      })),
    });
    for (const item of items) {
      for (const event of ["overdue", "escalated"] as const) {
        await enqueueNotifications({
          db: tx,
          event,
          subjectId: item.interruptId,
          payload: { ...item, link: `/threads/${item.threadId}` },
        });
      }
    }
    return items.length;
  });
  if (escalated === null) return { escalated: 0, expired: 0, fired: 0 };
  let expired = 0;
  for (const item of await listExpiring({ db })) {
    if (isDraining() || !item.expiryAnswer) break;
    try {
      await decideAndResume({
        database,
        threadId: item.threadId,
        entry: {
          interruptId: item.interruptId,
          status: item.expiryAnswer.status,
          payload: item.expiryAnswer.payload,
        },
        principal: EXPIRY_PRINCIPAL,
      });
      expired += 1;
    } catch (error) {
      const e = asAppError(error, "expiry");
      // Decided meanwhile, or a run in progress: nothing to mark (the next pass looks again if still pending).
      if (e.type === "conflict" || e.type === "unavailable" || e.type === "internal") continue;
      await markExpiryFailed({
        db,
        threadId: item.threadId,
        interruptId: item.interruptId,
        error: `${e.code}: ${e.message}`,
      });
    }
  }
  return { escalated, expired, fired: await fireDueTimers(database) };
}

/**
 * Answer every timer whose time is up with `fired`, as `system:timer`, through the same decision path as any answer:
 * the ledger's compare-and-set records it once whichever instance (or restart) gets there, and the resume run goes on
 * from the graph's last checkpoint. A timer the agent's policy refuses to the system is marked and left to a person.
 */
async function fireDueTimers(database: Database): Promise<number> {
  const { db } = database;
  let fired = 0;
  for (const timer of await listDueTimers({ db })) {
    if (isDraining()) break;
    try {
      await decideAndResume({
        database,
        threadId: timer.threadId,
        entry: { interruptId: timer.interruptId, status: "resolved", payload: { outcome: "fired" } },
        principal: TIMER_PRINCIPAL,
      });
      fired += 1;
    } catch (error) {
      const e = asAppError(error, "timer");
      if (e.type === "conflict" || e.type === "unavailable" || e.type === "internal") continue;
      await markExpiryFailed({
        db,
        threadId: timer.threadId,
        interruptId: timer.interruptId,
        error: `${e.code}: ${e.message}`,
      });
    }
  }
  return fired;
}

function rowsOf(result: unknown): unknown[] {
  return Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
}

/** Queue `new_item` and `effect_failed` notifications for what happened lately (idempotent: keyed per event). */
async function noticeRecent(db: AppDb): Promise<void> {
  const window = Math.max(60, Math.ceil((env.DEADLINE_SWEEP_MS * 10) / 1000));
  for (const d of await listRecentlyRaised({ db, withinSeconds: window })) {
    await enqueueNotifications({
      db,
      event: "new_item",
      subjectId: d.interruptId,
      amountCents: d.amountCents,
      payload: { ...d, link: `/threads/${d.threadId}` },
    });
  }
  for (const e of await listRecentlyFailedEffects({ db, withinSeconds: window })) {
    await enqueueNotifications({
      db,
      event: "effect_failed",
      subjectId: e.id,
      payload: {
        effectId: e.id,
        threadId: e.threadId,
        kind: e.kind,
        error: e.lastError,
        link: `/threads/${e.threadId}`,
      },
    });
  }
}

/** This process's deadline timer (process-wide: one timer however often the module is bundled). */
const DEADLINES = "deadlines";

/** Start this instance's deadline timer (escalation, expiry, notifications, expired claims, feed pruning), once. */
export function startDeadlines(): void {
  singleton(DEADLINES, startTimer);
}

function startTimer(): NodeJS.Timeout {
  let running = false;
  let passes = 0;
  const tick = async () => {
    if (running || isDraining()) return;
    running = true;
    try {
      const database = await getDatabase();
      const { db } = database;
      await sweepDeadlines({ database });
      await noticeRecent(db);
      await deliverNotifications({ db });
      // An expired claim goes (its feed row tells open inboxes); feed rows are kept an hour.
      await deleteExpiredClaims({ db, graceMs: 0 });
      if (passes++ % 60 === 0) await pruneInboxChanges({ db, keepSeconds: 3600 });
      reportReachable("deadlines");
    } catch (error) {
      reportTaskFailure("deadlines", error, "deadlines: sweep failed");
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), env.DEADLINE_SWEEP_MS);
  timer.unref();
  void tick();
  return timer;
}

/** Stop the timer (the process is draining). */
export function stopDeadlines(): void {
  clearInterval(peekSingleton<NodeJS.Timeout>(DEADLINES));
  clearSingleton(DEADLINES);
}
