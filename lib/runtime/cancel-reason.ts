/*
 * A run an operator stopped (POST /api/threads/{id}/runs/{runId}/cancel): how its abort is told apart from a lost
 * lease, and what the page and the stream say of it. No imports: the executor, the heartbeat and the listener use it.
 */

/** The RUN_ERROR code of a run an operator stopped, and the run's `error_code`. */
export const RUN_CANCELLED = "conflict:run_cancelled";

/** Why a run's graph was aborted: an operator stopped it (told apart from a lost lease by this code, never a class). */
export interface CancelReason {
  code: typeof RUN_CANCELLED;
  by: string;
}

export function cancelReason(by: string): CancelReason {
  return { code: RUN_CANCELLED, by };
}

export function isCancelReason(reason: unknown): reason is CancelReason {
  return (
    typeof reason === "object" &&
    reason !== null &&
    (reason as { code?: unknown }).code === RUN_CANCELLED &&
    typeof (reason as { by?: unknown }).by === "string"
  );
}

/** What the page and the stream say of a stopped run. */
export function stoppedMessage(by: string): string {
  return `Stopped by ${by}. The thread is at its last checkpoint: try again to continue it, or fork it from its history.`;
}
