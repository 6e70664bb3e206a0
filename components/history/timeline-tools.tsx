"use client";

import { type FormEvent, useId, useState } from "react";
import { Button } from "@/components/ui/button";
import type { HistoryCheckpoint } from "@/lib/contract/views/history";

/** What the timeline shows: by node, by source, only where a person was asked. Empty strings: no filter. */
export interface TimelineFilter {
  node: string;
  source: string;
  asked: boolean;
}

export const NO_FILTER: TimelineFilter = { node: "", source: "", asked: false };

/** LangGraph's `metadata.source` in words. */
const SOURCES: Record<string, string> = {
  input: "Run input",
  loop: "A node ran",
  update: "State edit",
  fork: "Fork copy",
};

/** Whether a checkpoint passes the filter; `asked`: the steps that asked a person (the tree's badge), by id. */
export function matchesFilter(c: HistoryCheckpoint, f: TimelineFilter, asked: ReadonlySet<string>): boolean {
  if (f.node && !(c.writtenBy.kind === "nodes" && c.writtenBy.nodes.includes(f.node))) return false;
  if (f.source && c.source !== f.source) return false;
  if (f.asked && !asked.has(c.checkpointId) && !c.pausedForHuman) return false;
  return true;
}

export function isFiltered(f: TimelineFilter): boolean {
  return Boolean(f.node || f.source || f.asked);
}

/**
 * Finding a step in a long history: filter the timeline (by node, by source, steps that asked a person) and jump —
 * to the head, to the first step of the selected step's line, or to a step by its number.
 */
export function TimelineTools({
  checkpoints,
  filter,
  onFilter,
  selected,
  onSelect,
  shown,
}: {
  checkpoints: readonly HistoryCheckpoint[];
  filter: TimelineFilter;
  onFilter: (f: TimelineFilter) => void;
  selected: HistoryCheckpoint | null;
  onSelect: (checkpointId: string) => void;
  /** How many checkpoints the filter leaves. */
  shown: number;
}) {
  const id = useId();
  const [step, setStep] = useState("");
  const [missing, setMissing] = useState<string | null>(null);
  const nodes = [
    ...new Set(checkpoints.flatMap((c) => (c.writtenBy.kind === "nodes" ? c.writtenBy.nodes : []))),
  ].sort();
  const sources = [
    ...new Set(checkpoints.map((c) => c.source).filter((s): s is string => Boolean(s))),
  ].sort();
  const head = checkpoints.find((c) => c.isHead) ?? null;
  const lineRoot = selected
    ? checkpoints
        .filter((c) => c.branch === selected.branch)
        .reduce<HistoryCheckpoint | null>((first, c) => (!first || c.number < first.number ? c : first), null)
    : null;

  const goToStep = (event: FormEvent) => {
    event.preventDefault();
    const n = Number(step);
    const found = Number.isInteger(n) ? checkpoints.find((c) => c.number === n) : undefined;
    if (!found) {
      setMissing(
        step.trim() === ""
          ? "Type a step number."
          : `There is no step ${step.trim()} among the steps loaded (load older steps to reach it).`,
      );
      return;
    }
    setMissing(null);
    onSelect(found.checkpointId);
  };

  const field =
    "min-w-0 max-w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-indigo-600";
  return (
    <section aria-label="Find a step" className="space-y-3 rounded-lg border border-slate-200 bg-white p-3">
      <div className="flex flex-wrap items-end gap-3">
        <label
          className="flex min-w-0 max-w-full flex-col gap-1 text-xs font-medium text-slate-700"
          htmlFor={`${id}-node`}
        >
          Node
          <select
            id={`${id}-node`}
            className={field}
            value={filter.node}
            onChange={(e) => onFilter({ ...filter, node: e.target.value })}
            data-testid="timeline-node"
          >
            <option value="">Any node</option>
            {nodes.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label
          className="flex min-w-0 max-w-full flex-col gap-1 text-xs font-medium text-slate-700"
          htmlFor={`${id}-source`}
        >
          Written by
          <select
            id={`${id}-source`}
            className={field}
            value={filter.source}
            onChange={(e) => onFilter({ ...filter, source: e.target.value })}
            data-testid="timeline-source"
          >
            <option value="">Anything</option>
            {sources.map((s) => (
              <option key={s} value={s}>
                {SOURCES[s] ?? s}
              </option>
            ))}
          </select>
        </label>
        <label className="flex items-center gap-2 pb-1.5 text-sm text-slate-800">
          <input
            type="checkbox"
            checked={filter.asked}
            onChange={(e) => onFilter({ ...filter, asked: e.target.checked })}
            data-testid="timeline-asked"
          />
          Asked a person
        </label>
      </div>
      {isFiltered(filter) && (
        <p className="flex flex-wrap items-center gap-3 text-sm text-slate-700" role="status">
          <span data-testid="timeline-count">
            {shown} of {checkpoints.length} steps match.
          </span>
          <Button variant="secondary" onClick={() => onFilter(NO_FILTER)} data-testid="timeline-clear">
            Show every step
          </Button>
        </p>
      )}
      <div className="flex flex-wrap items-end gap-2">
        <Button
          variant="secondary"
          disabled={!head}
          onClick={() => head && onSelect(head.checkpointId)}
          data-testid="jump-head"
        >
          Head
        </Button>
        <Button
          variant="secondary"
          disabled={!lineRoot || lineRoot.checkpointId === selected?.checkpointId}
          onClick={() => lineRoot && onSelect(lineRoot.checkpointId)}
          data-testid="jump-line-root"
        >
          First step of this line
        </Button>
        <form onSubmit={goToStep} className="flex items-end gap-2">
          <label
            className="flex min-w-0 max-w-full flex-col gap-1 text-xs font-medium text-slate-700"
            htmlFor={`${id}-step`}
          >
            Step
            <input
              id={`${id}-step`}
              inputMode="numeric"
              className={`${field} w-20`}
              value={step}
              onChange={(e) => setStep(e.target.value)}
              aria-describedby={missing ? `${id}-missing` : undefined}
              data-testid="jump-step"
            />
          </label>
          <Button variant="secondary" type="submit" data-testid="jump-step-go">
            Go
          </Button>
        </form>
      </div>
      {missing && (
        <p id={`${id}-missing`} role="alert" className="text-sm text-red-800" data-testid="jump-missing">
          {missing}
        </p>
      )}
    </section>
  );
}
