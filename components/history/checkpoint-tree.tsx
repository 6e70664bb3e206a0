"use client";

import { type KeyboardEvent, useMemo, useRef } from "react";
import type { HistoryCheckpoint } from "@/lib/contract/views/history";
import { branchName, writtenByText } from "./labels";
import { laneColor } from "./lane-colors";
import { LaneGutter } from "./lane-gutter";
import { layoutLanes } from "./lanes";

const badge = "rounded px-1.5 py-0.5 text-[11px] font-semibold";

/**
 * The steps where a person was asked. A node that asks records its question on the checkpoint before it (the one it
 * runs from); the answer is taken by the checkpoint that node writes. So "Asked a person" goes on that one, next to
 * the node's name — and on a step still waiting for its answer.
 */
export function askedCheckpointIds(checkpoints: readonly HistoryCheckpoint[]): Set<string> {
  const interrupted = new Set(checkpoints.filter((c) => c.interruptCount > 0).map((c) => c.checkpointId));
  return new Set(
    checkpoints
      .filter(
        (c) =>
          c.writtenBy.kind === "nodes" &&
          c.parentCheckpointId !== null &&
          interrupted.has(c.parentCheckpointId),
      )
      .map((c) => c.checkpointId),
  );
}

/**
 * The checkpoint tree, newest first, one lane per branch. One button per checkpoint; only the selected one is in
 * the tab order, and the arrow keys (Home, End) move the selection, so the tree is one tab stop.
 */
export function CheckpointTree({
  checkpoints,
  branchOrder,
  selectedId,
  onSelect,
  askedIds,
}: {
  checkpoints: HistoryCheckpoint[];
  branchOrder: string[];
  selectedId: string | null;
  onSelect: (checkpointId: string) => void;
  /** The steps that asked a person, read from the whole history (see {@link askedCheckpointIds}). */
  askedIds?: ReadonlySet<string>;
}) {
  const layout = useMemo(() => layoutLanes(checkpoints, branchOrder), [checkpoints, branchOrder]);
  // Read from the whole history when the list is filtered (a step's parent may be filtered out).
  const own = useMemo(() => askedCheckpointIds(checkpoints), [checkpoints]);
  const asked = askedIds ?? own;
  const buttons = useRef(new Map<string, HTMLButtonElement>());
  // The selected step may be filtered out of the list: then nothing is marked, and the first row takes the tab stop.
  const selectedIndex = checkpoints.findIndex((c) => c.checkpointId === selectedId);
  const tabStop = Math.max(0, selectedIndex);

  const move = (event: KeyboardEvent, index: number) => {
    const target = { ArrowDown: index + 1, ArrowUp: index - 1, Home: 0, End: checkpoints.length - 1 }[
      event.key
    ];
    const next = target === undefined ? undefined : checkpoints[target];
    if (!next) return;
    event.preventDefault();
    onSelect(next.checkpointId);
    buttons.current.get(next.checkpointId)?.focus();
  };

  return (
    <div>
      <p id="tree-help" className="mb-2 text-xs text-slate-600">
        Newest first. Use ↑ and ↓ to move through the checkpoints.
      </p>
      <ol aria-label="Checkpoints, newest first" data-testid="checkpoint-tree" className="space-y-0">
        {checkpoints.map((cp, i) => {
          const row = layout.rows[i];
          const selected = i === selectedIndex;
          const lane = layout.laneOf.get(cp.branch) ?? 0;
          return (
            <li
              key={cp.checkpointId}
              data-testid="checkpoint-row"
              data-checkpoint-id={cp.checkpointId}
              data-branch={cp.branch}
              data-number={cp.number}
              data-source={cp.source ?? ""}
              data-nodes={cp.writtenBy.kind === "nodes" ? cp.writtenBy.nodes.join(" ") : ""}
              data-interrupts={cp.interruptCount}
              className="flex items-stretch"
            >
              {row && (
                <LaneGutter
                  row={row}
                  laneCount={layout.laneCount}
                  head={cp.isHead}
                  paused={cp.pausedForHuman}
                />
              )}
              <button
                type="button"
                ref={(el) => {
                  if (el) buttons.current.set(cp.checkpointId, el);
                  else buttons.current.delete(cp.checkpointId);
                }}
                tabIndex={i === tabStop ? 0 : -1}
                aria-current={selected ? "true" : undefined}
                aria-describedby="tree-help"
                onClick={() => onSelect(cp.checkpointId)}
                onKeyDown={(e) => move(e, i)}
                className={`my-0.5 flex min-w-0 flex-1 flex-col items-start rounded-md px-2 py-1.5 text-left text-sm ${
                  selected ? "bg-indigo-50 ring-2 ring-inset ring-indigo-600" : "hover:bg-slate-100"
                }`}
              >
                <span className="flex w-full items-baseline gap-2">
                  <span className="font-semibold tabular-nums">Step {cp.number}</span>
                  <span className="truncate font-mono text-xs text-slate-800">
                    {writtenByText(cp.writtenBy)}
                  </span>
                </span>
                <span className="mt-1 flex flex-wrap gap-1">
                  <span className={`${badge} ring-1 ring-inset ${laneColor(lane).chip}`}>
                    {branchName(cp.branch)}
                  </span>
                  {cp.isHead && <span className={`${badge} bg-indigo-700 text-white`}>HEAD</span>}
                  {cp.pausedForHuman && (
                    <span className={`${badge} bg-amber-100 text-amber-900`}>Waiting for a person</span>
                  )}
                  {asked.has(cp.checkpointId) && (
                    <span className={`${badge} bg-slate-100 text-slate-800`} data-testid="asked-a-person">
                      Asked a person
                    </span>
                  )}
                  {cp.abandoned && (
                    <span className={`${badge} bg-slate-100 text-slate-800`} data-testid="abandoned">
                      Rolled back by a newer message
                    </span>
                  )}
                  {cp.truncated && (
                    <span className={`${badge} bg-slate-100 text-slate-800`}>Earlier steps pruned</span>
                  )}
                  {cp.childCount > 1 && (
                    <span className={`${badge} bg-slate-100 text-slate-800`}>
                      Fork point · {cp.childCount} branches
                    </span>
                  )}
                </span>
              </button>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
