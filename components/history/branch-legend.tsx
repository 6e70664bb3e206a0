import type { BranchSummary, HistoryCheckpoint } from "@/lib/contract/views/history";
import { branchName } from "./labels";
import { laneColor } from "./lane-colors";

/** The branches of the tree: where each left its parent, its size, and a button to its newest checkpoint. */
export function BranchLegend({
  branches,
  checkpoints,
  onSelect,
}: {
  branches: BranchSummary[];
  checkpoints: HistoryCheckpoint[];
  onSelect: (checkpointId: string) => void;
}) {
  const stepOf = new Map(checkpoints.map((c) => [c.checkpointId, c.number]));
  return (
    <section aria-labelledby="branches-heading" className="rounded-lg border border-slate-200 bg-white p-3">
      <h2 id="branches-heading" className="text-sm font-semibold">
        Branches ({branches.length})
      </h2>
      <ul className="mt-2 space-y-1.5">
        {branches.map((b, lane) => (
          <li key={b.label} className="flex flex-wrap items-center gap-2 text-sm">
            <span
              className={`rounded px-1.5 py-0.5 text-xs font-semibold ring-1 ring-inset ${laneColor(lane).chip}`}
            >
              {branchName(b.label)}
            </span>
            <span className="text-xs text-slate-700">
              {b.size} {b.size === 1 ? "checkpoint" : "checkpoints"}
              {b.forkedFromCheckpointId &&
                `, forked from step ${stepOf.get(b.forkedFromCheckpointId) ?? "?"}`}
            </span>
            <button
              type="button"
              data-testid={`branch-${b.label}`}
              onClick={() => onSelect(b.leafCheckpointId)}
              className="ml-auto text-xs font-medium text-indigo-800 underline underline-offset-2"
            >
              Show last checkpoint<span className="sr-only"> of {branchName(b.label)}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
