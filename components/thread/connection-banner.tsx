import { Button } from "@/components/ui/button";
import { OperatorError } from "@/components/ui/operator-error";
import { MODEL_TIMED_OUT, RUN_CANCELLED, RUN_TIMED_OUT } from "@/lib/contract/run-stops";

/** Runs that were stopped (by an operator, or at a time limit) rather than failing: their message says so itself. */
const STOPPED = new Set([RUN_CANCELLED, RUN_TIMED_OUT, MODEL_TIMED_OUT]);

import type { ThreadState } from "./thread-state";

/** Connection trouble, refusals from the server ({code, message}) and run notices, above the work area. */
export function ConnectionBanner({ state, onDismiss }: { state: ThreadState; onDismiss: () => void }) {
  return (
    <div className="space-y-2">
      {state.connection === "reconnecting" && (
        <p
          role="status"
          className="rounded-md bg-amber-50 p-3 text-sm text-amber-950 ring-1 ring-amber-300"
          data-testid="reconnecting"
        >
          Connection lost. Reconnecting
          {state.reconnectAttempt > 1 ? ` (attempt ${state.reconnectAttempt})` : ""}… The run goes on on the
          server; this page catches up from event {state.lastSeq}.
        </p>
      )}
      {state.serverDown && state.connection !== "reconnecting" && (
        <p
          role="status"
          className="rounded-md bg-amber-50 p-3 text-sm text-amber-950 ring-1 ring-amber-300"
          data-testid="server-down"
        >
          Lost the connection to the server. Retrying every few seconds… What this page shows may be out of
          date until it is back.
        </p>
      )}
      {state.error && (
        <div
          role="alert"
          className="flex flex-wrap items-start justify-between gap-3 rounded-md bg-red-50 p-3 text-sm text-red-950 ring-1 ring-red-300"
          data-testid="server-error"
          data-code={state.error.code}
        >
          <OperatorError error={state.error} />
          <Button variant="secondary" onClick={onDismiss}>
            Dismiss
          </Button>
        </div>
      )}
      {state.runError && state.status === "stopped" && (
        <p
          role="status"
          className="rounded-md bg-slate-50 p-3 text-sm text-slate-900 ring-1 ring-slate-300"
          data-testid="run-stopped"
          data-code={state.runError.code}
        >
          {state.runError.message || "The run was stopped."}
        </p>
      )}
      {state.runError && state.status === "failed" && (
        <p
          role="alert"
          className="rounded-md bg-red-50 p-3 text-sm text-red-950 ring-1 ring-red-300"
          data-testid="run-error"
        >
          <OperatorError
            error={state.runError}
            lead={STOPPED.has(state.runError.code) ? undefined : "The run failed:"}
          />
        </p>
      )}
      {state.notices.map((notice) => (
        <p
          key={notice}
          className="rounded-md bg-sky-50 p-3 text-sm text-sky-950 ring-1 ring-sky-200"
          data-testid="run-notice"
        >
          {notice}
        </p>
      ))}
    </div>
  );
}
