/*
 * A run an operator stopped (POST /api/threads/{id}/runs/{runId}/cancel): how its abort is told apart from a lost
 * lease, and what the page and the stream say of it. Imports only the codes (lib/contract/run-stops.ts, which the
 * browser reads too): the executor, the heartbeat and the listener use it.
 */

import { MODEL_TIMED_OUT, RUN_CANCELLED, RUN_TIMED_OUT } from "@/lib/contract/run-stops";

/** The codes of a stopped run live in lib/contract/run-stops.ts. */
export { MODEL_TIMED_OUT, RUN_CANCELLED, RUN_TIMED_OUT };

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

/** Why a run's graph was aborted: it reached its wall-clock limit. */
export interface TimeoutReason {
  code: typeof RUN_TIMED_OUT;
  limitMs: number;
}

export function isTimeoutReason(reason: unknown): reason is TimeoutReason {
  return (
    typeof reason === "object" && reason !== null && (reason as { code?: unknown }).code === RUN_TIMED_OUT
  );
}

/**
 * A model call that timed out, as LangChain reports it once its retries are spent (an error named `TimeoutError`,
 * from the OpenAI client's connection timeout): judged by its name and words, never by its class.
 */
export function isModelTimeout(error: unknown): boolean {
  const e = error as { name?: unknown; message?: unknown } | null;
  return (
    typeof e === "object" &&
    e !== null &&
    (e.name === "TimeoutError" ||
      e.name === "APIConnectionTimeoutError" ||
      e.message === "Request timed out.")
  );
}

/** What the page and the stream say of a stopped run. */
export function stoppedMessage(by: string): string {
  return `Stopped by ${by}.`;
}
