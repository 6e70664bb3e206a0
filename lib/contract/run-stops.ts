/*
 * The RUN_ERROR codes of a run that did not end on its own, which the server sets (lib/runtime/runs/cancel-reason.ts)
 * and the thread page tells apart: an operator stopped it, it reached its wall-clock limit, its model did not answer.
 */

/** The RUN_ERROR code of a run an operator stopped, and the run's `error_code`. */
export const RUN_CANCELLED = "conflict:run_cancelled";

/** The RUN_ERROR code of a run stopped at its wall-clock limit (RUN_MAX_MS), and of one whose model did not answer. */
export const RUN_TIMED_OUT = "unavailable:run_timeout";
export const MODEL_TIMED_OUT = "unavailable:model_timeout";
