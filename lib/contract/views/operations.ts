/*
 * The operations page: the queue's gauges and samples, decisions per hour, failed runs and effects, the retention
 * job. Types only: the server loads it in lib/runtime/views/operations-view.ts.
 */

/** What the operations page shows: plain numbers and strings (it crosses to the browser for the charts). */
export interface OperationsView {
  now: number;
  /** The gauges `/api/metrics` reports, read by the same query at the same moment. */
  current: {
    pending: number;
    pendingByAction: Record<string, number>;
    oldestAgeSeconds: number;
    /** Durable timers waiting for their time: not pending work (see `QueueState.timersWaiting`). */
    timersWaiting: number;
    failedThreads: number;
    /** Threads whose last run was stopped on purpose: counted apart from failures. */
    stoppedThreads: number;
    failedEffects: number;
  };
  /** Queue samples, oldest first: unix seconds and the numbers at that moment. */
  samples: {
    at: number;
    pending: number;
    oldestAgeSeconds: number;
    failedThreads: number;
    failedEffects: number;
  }[];
  /** Decisions per hour (unix seconds of the hour) by outcome. */
  decisions: { hours: number[]; outcomes: Record<string, number[]> };
  failedRuns: {
    runId: string;
    threadId: string;
    kind: string;
    errorCode: string | null;
    finishedAt: string | null;
  }[];
  failedEffects: { effectId: string; threadId: string; kind: string; attempts: number; updatedAt: string }[];
  /** The reconciliation with the payment provider: what it compares with, its last run, the open findings. */
  reconciliation: {
    provider: "stripe" | "http" | null;
    everyMs: number | null;
    lastFinishedAt: string | null;
    lastOutcome: string | null;
    lastFound: number | null;
    openFindings: number;
  };
  /** The scheduled retention job: its interval (null: off) and its last run, by whichever instance. */
  retention: {
    everyMs: number | null;
    running: boolean;
    lastStartedAt: string | null;
    lastFinishedAt: string | null;
    lastOk: boolean | null;
    lastError: string | null;
    removed: Record<string, number> | null;
    runs: number;
  };
}
