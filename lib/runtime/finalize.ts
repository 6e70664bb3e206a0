import "server-only";
import type { AppDb } from "@/lib/db/open";
import { recordPendingDecisions, supersedeOtherPending } from "@/lib/db/queries/decisions";
import { appendEvents, type LoggedEvent } from "@/lib/db/queries/events";
import { finishRun } from "@/lib/db/queries/runs";
import { endThreadRun } from "@/lib/db/queries/threads";
import type { Thread } from "@/lib/db/schema";
import type { DecisionSummary } from "./agent";
import { publishEvents } from "./event-bus";
import { LostOwnershipError } from "./ownership";

export { LostOwnershipError };

export interface RunEnding {
  runId: string;
  threadId: string;
  owner: string;
  status: "interrupted" | "succeeded" | "failed" | "cancelled" | "timed_out";
  threadStatus: Thread["status"];
  /** Interrupts pending at the thread's head after the run, read by the thread's agent (action, inbox summary). */
  interrupts: { id: string; value: unknown; action: string; summary: DecisionSummary }[];
  /** What the thread is about, for the inbox when a payload does not say (e.g. a confirm_email has no order). */
  context?: { orderId?: string | null; customerName?: string | null };
  checkpointId: string | null;
  error?: { code: string; message: string };
  /** The run's last events (snapshots and RUN_FINISHED / RUN_ERROR), already numbered. */
  events: LoggedEvent[];
  /** Model tokens the execution spent: on the run's row in the same statement that closes it (budgets add them up). */
  tokens?: { in: number; out: number };
}

/**
 * End a run in one transaction: close the run row (only if this process still owns it), record the new pending
 * decisions, supersede decisions the thread no longer waits for, set the thread's status and log the final events.
 * The final events are published only after the commit, so a client that sees RUN_FINISHED can resume at once.
 * Answers whether input waits in the thread's queue (read in the same statement as the status; undefined: not known).
 */
export async function finalizeRun({
  db,
  ...ending
}: RunEnding & { db: AppDb }): Promise<{ inputWaiting: boolean | undefined }> {
  const result = await db.transaction(async (tx) => {
    // Events first, while the run is still active and ours (the append checks both); then close the run.
    const owned = await appendEvents({
      db: tx,
      threadId: ending.threadId,
      runId: ending.runId,
      owner: ending.owner,
      batch: ending.events,
    });
    const closed =
      owned &&
      (await finishRun({
        db: tx,
        runId: ending.runId,
        owner: ending.owner,
        status: ending.status,
        errorCode: ending.error?.code,
        errorMessage: ending.error?.message,
        ...(ending.tokens ? { tokens: ending.tokens } : {}),
      }));
    if (!closed) throw new LostOwnershipError(`run ${ending.runId} is no longer owned by ${ending.owner}`);
    if (ending.checkpointId) {
      await recordPendingDecisions({
        db: tx,
        rows: ending.interrupts.map((i) => ({
          interruptId: i.id,
          threadId: ending.threadId,
          runId: ending.runId,
          checkpointId: ending.checkpointId as string,
          action: i.action,
          payload: (i.value ?? null) as object,
          ...withContext(i.summary, ending.context),
        })),
      });
      // The head now waits for exactly these interrupts; any other pending decision no longer applies.
      await supersedeOtherPending({
        db: tx,
        threadId: ending.threadId,
        keep: ending.interrupts.map((i) => i.id),
      });
    }
    if (ending.threadStatus === "failed") {
      // A failed thread waits for nothing: decisions still open in the ledger belong to a head this run left (a fork
      // from a thread waiting for its reply), and would sit in the inbox, unanswerable, while "Try again" is refused.
      await supersedeOtherPending({ db: tx, threadId: ending.threadId, keep: [] });
    }
    const { inputWaiting } = await endThreadRun({
      db: tx,
      threadId: ending.threadId,
      status: ending.threadStatus,
      // What the thread turned out to be about: search finds its customer by it (a ticket filed without an order).
      contextOrder: ending.context?.orderId ?? null,
    });
    // Whether input waits is known only if the event append above locked the thread's row (it had events to write).
    return { inputWaiting: ending.events.length > 0 ? inputWaiting : undefined };
  });
  publishEvents(ending.threadId, ending.events);
  return result;
}

/** Fill the inbox summary's order and customer from the thread when the payload itself does not name them. */
function withContext(summary: DecisionSummary, context: RunEnding["context"]): DecisionSummary {
  return {
    ...summary,
    orderId: summary.orderId ?? context?.orderId ?? null,
    customerName: summary.customerName ?? context?.customerName ?? null,
  };
}
