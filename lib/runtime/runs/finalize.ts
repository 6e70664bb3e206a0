import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { AppDb } from "@/lib/db/open";
import type { LoggedEvent } from "@/lib/db/queries/events";
import { closeRun } from "@/lib/db/queries/run-end";
import type { Thread } from "@/lib/db/schema";
import { currentBuild } from "@/lib/platform/build";
import type { DecisionSummary } from "../agents/registry";
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
  context?: {
    orderId?: string | null;
    customerName?: string | null;
    amount?: { amountCents: number; currency: string } | null;
    /** The thread's money (its order's currency), for an amount a question names without one. */
    currency?: string | null;
  };
  checkpointId: string | null;
  error?: { code: string; message: string };
  /** The run's last events (snapshots and RUN_FINISHED / RUN_ERROR), already numbered. */
  events: LoggedEvent[];
  /** Model tokens the execution spent: on the run's row in the same statement that closes it (budgets add them up). */
  tokens?: { in: number; out: number };
  /**
   * The run ends asking nothing: refuse to end it while the ledger still waits for a decision (its graph no longer
   * has the question) — `conflict:decision_pending`, for a supervisor, never a success. Checked in the same statement.
   */
  refuseIfPending?: boolean;
}

/**
 * End a run in one statement (`closeRun`): close the run row (only if this process still owns it), log the final
 * events, record the new pending decisions, supersede decisions the thread no longer waits for and set the thread's
 * status. The final events are published only after the commit, so a client that sees RUN_FINISHED can resume at once.
 * Answers whether input waits in the thread's queue (undefined: not known, the caller reads the queue).
 */
export async function finalizeRun({
  db,
  ...ending
}: RunEnding & { db: AppDb }): Promise<{ inputWaiting: boolean | undefined }> {
  const { closed, inputWaiting, pending } = await closeRun(db, {
    threadId: ending.threadId,
    runId: ending.runId,
    owner: ending.owner,
    status: ending.status,
    ...(ending.error ? { error: ending.error } : {}),
    ...(ending.tokens ? { tokens: ending.tokens } : {}),
    events: ending.events,
    threadStatus: ending.threadStatus,
    // What the thread turned out to be about: search finds its customer by it (a ticket filed without an order).
    contextOrder: ending.context?.orderId ?? null,
    head: ending.checkpointId
      ? {
          checkpointId: ending.checkpointId,
          decisions: ending.interrupts.map((i) => {
            const summary = withContext(i.summary, ending.context);
            return {
              interruptId: i.id,
              action: i.action,
              payload: i.value ?? null,
              title: summary.title ?? null,
              orderId: summary.orderId ?? null,
              customerName: summary.customerName ?? null,
              amountCents: summary.amountCents ?? null,
              currency: summary.currency ?? null,
              findings: summary.findings?.length ? summary.findings : null,
            };
          }),
        }
      : null,
    // The code that asked them: a resume under the same build needs no replay of the step (./asked-again.ts).
    build: currentBuild(),
    ...(ending.refuseIfPending ? { refuseIfPending: true } : {}),
  });
  if (!closed && pending && pending.length > 0) {
    throw new AppError(
      "conflict:decision_pending",
      `The run ended while ${pending.length === 1 ? "a decision was" : `${pending.length} decisions were`} still pending in the ledger; a supervisor must look at this thread.`,
      { pending },
    );
  }
  if (!closed) throw new LostOwnershipError(`run ${ending.runId} is no longer owned by ${ending.owner}`);
  publishEvents(ending.threadId, ending.events);
  return { inputWaiting };
}

/** Fill the inbox summary's order, customer and amount from the thread when the payload itself does not name them. */
function withContext(summary: DecisionSummary, context: RunEnding["context"]): DecisionSummary {
  const amount = summary.amountCents === null || summary.amountCents === undefined ? context?.amount : null;
  return {
    ...summary,
    orderId: summary.orderId ?? context?.orderId ?? null,
    customerName: summary.customerName ?? context?.customerName ?? null,
    ...(amount ? { amountCents: amount.amountCents, currency: amount.currency } : {}),
    ...(!amount && summary.amountCents != null && !summary.currency && context?.currency
      ? { currency: context.currency }
      : {}),
  };
}
