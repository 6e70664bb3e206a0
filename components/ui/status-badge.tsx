import { humanize } from "@/lib/contract/humanize";
import type { ThreadStatus } from "@/lib/contract/wire";

const STATUS: Record<ThreadStatus, { label: string; className: string }> = {
  idle: { label: "Not started", className: "bg-slate-100 text-slate-800 ring-slate-300" },
  running: { label: "Running", className: "bg-sky-50 text-sky-900 ring-sky-300" },
  interrupted: { label: "Waiting for a decision", className: "bg-amber-50 text-amber-950 ring-amber-300" },
  completed: { label: "Completed", className: "bg-emerald-50 text-emerald-900 ring-emerald-300" },
  failed: { label: "Failed", className: "bg-red-50 text-red-900 ring-red-300" },
  // A person (or a spending limit's "stop") ended the run on purpose: neutral, not a failure.
  stopped: { label: "Stopped", className: "bg-slate-100 text-slate-800 ring-slate-300" },
  needs_attention: { label: "Needs a supervisor", className: "bg-orange-50 text-orange-950 ring-orange-400" },
  closed: { label: "Closed", className: "bg-slate-100 text-slate-800 ring-slate-300" },
};

/** A graph node name as a step people read: `write_reply` → "Write reply". */
export function humanizeStep(step: string): string {
  return humanize(step);
}

/** A thread's status as a coloured label (the text carries the meaning, not the colour). */
export function StatusBadge({ status }: { status: string }) {
  const s = STATUS[status as ThreadStatus] ?? { label: humanize(status), className: STATUS.idle.className };
  return (
    <span
      data-testid="status-badge"
      data-status={status}
      className={`inline-flex items-center gap-1.5 rounded-full px-2.5 py-0.5 text-xs font-semibold ring-1 ring-inset ${s.className}`}
    >
      {status === "running" && (
        <span aria-hidden="true" className="size-1.5 animate-pulse rounded-full bg-sky-700" />
      )}
      {s.label}
    </span>
  );
}

/** The thread page's status (announced when it changes) and, while a run is going, its current step. */
export function LiveStatusBadge({ status, step }: { status: string; step?: string }) {
  return (
    <div role="status" className="flex flex-wrap items-center gap-2 text-sm">
      <StatusBadge status={status} />
      {status === "running" && step && (
        <span className="text-slate-700" data-testid="current-step">
          Step: <span className="font-medium text-slate-900">{humanizeStep(step)}</span>
        </span>
      )}
    </div>
  );
}
