const STYLES: Record<string, string> = {
  running: "bg-sky-50 text-sky-800 ring-sky-200",
  interrupted: "bg-amber-50 text-amber-900 ring-amber-200",
  completed: "bg-emerald-50 text-emerald-800 ring-emerald-200",
  failed: "bg-red-50 text-red-800 ring-red-200",
  idle: "bg-slate-50 text-slate-700 ring-slate-200",
};

const LABELS: Record<string, string> = {
  running: "Running",
  interrupted: "Waiting for a person",
  completed: "Completed",
  failed: "Failed",
  idle: "Idle",
};

/** A thread's status as a coloured label (the text carries the meaning, not the colour). */
export function StatusBadge({ status }: { status: string }) {
  return (
    <span
      className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STYLES[status] ?? STYLES.idle}`}
    >
      {LABELS[status] ?? status}
    </span>
  );
}
