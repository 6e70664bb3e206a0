"use client";

import { create, type Delta } from "jsondiffpatch";
import { useEffect, useId, useState } from "react";
import { errorMessage, fetchJson } from "@/components/ui/fetch-json";
import type { CheckpointView } from "@/lib/contract/views/checkpoint";
import type { HistoryCheckpoint } from "@/lib/contract/views/history";
import { commonAncestor } from "./ancestry";
import { DiffTable } from "./diff-table";
import { branchName, writtenByText } from "./labels";

/** Messages matched by id (an appended message reads as one addition), other array items by position. */
const differ = create({
  objectHash: (item, index) => {
    const id = (item as { id?: unknown }).id;
    return typeof id === "string" ? `id:${id}` : `index:${index ?? ""}`;
  },
});

const label = (c: HistoryCheckpoint) =>
  `Step ${c.number} · ${branchName(c.branch)} · ${writtenByText(c.writtenBy)}`;

/**
 * Compare the selected checkpoint with any other of the thread, on any line: what changes going from one to the
 * other (the same diff view as against the parent), and the step both descend from.
 */
export function ComparePanel({
  threadId,
  checkpoints,
  selected,
}: {
  threadId: string;
  checkpoints: readonly HistoryCheckpoint[];
  selected: HistoryCheckpoint;
}) {
  const id = useId();
  const [otherId, setOtherId] = useState("");
  const [result, setResult] = useState<{ delta: Delta | null; key: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const other = checkpoints.find((c) => c.checkpointId === otherId) ?? null;
  const key = other ? `${selected.checkpointId}:${other.checkpointId}` : "";

  useEffect(() => {
    if (!other) return;
    const controller = new AbortController();
    const read = (checkpointId: string) =>
      fetchJson<CheckpointView>(
        `/api/threads/${encodeURIComponent(threadId)}/checkpoints/${encodeURIComponent(checkpointId)}`,
        { signal: controller.signal },
      );
    setError(null);
    Promise.all([read(selected.checkpointId), read(other.checkpointId)])
      .then(([a, b]) => {
        const delta = differ.diff(
          { ...a.values, messages: a.messages },
          { ...b.values, messages: b.messages },
        ) as Delta | undefined;
        setResult({ delta: delta ?? null, key: `${a.checkpointId}:${b.checkpointId}` });
      })
      .catch((e) => {
        if (!controller.signal.aborted) setError(errorMessage(e));
      });
    return () => controller.abort();
  }, [threadId, selected.checkpointId, other]);

  const ancestor = other ? commonAncestor(checkpoints, selected.checkpointId, other.checkpointId) : null;
  return (
    <section aria-labelledby={`${id}-h`} className="space-y-3" data-testid="compare-panel">
      <h3 id={`${id}-h`} className="text-sm font-semibold text-slate-900">
        Compare with another step
      </h3>
      <label
        className="flex min-w-0 flex-col gap-1 text-xs font-medium text-slate-700"
        htmlFor={`${id}-with`}
      >
        Step {selected.number} against
        <select
          id={`${id}-with`}
          className="w-full min-w-0 max-w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-indigo-600"
          value={otherId}
          onChange={(e) => setOtherId(e.target.value)}
          data-testid="compare-with"
        >
          <option value="">Choose a step…</option>
          {checkpoints
            .filter((c) => c.checkpointId !== selected.checkpointId)
            .map((c) => (
              <option key={c.checkpointId} value={c.checkpointId}>
                {label(c)}
              </option>
            ))}
        </select>
      </label>
      {other && (
        <p className="text-sm text-slate-700" data-testid="compare-ancestor">
          {ancestor
            ? ancestor.checkpointId === selected.checkpointId || ancestor.checkpointId === other.checkpointId
              ? `One descends from the other: step ${ancestor.number} is the earlier of the two.`
              : `Both descend from step ${ancestor.number} (${branchName(ancestor.branch)}), where their lines part.`
            : "Their lines meet before the oldest step loaded: load older steps to find where."}
        </p>
      )}
      {error && (
        <p role="alert" className="text-sm text-red-800">
          Could not read the steps ({error}).
        </p>
      )}
      {other && result?.key === key && (
        <div>
          <p className="mb-1 text-xs text-slate-600">
            Going from step {selected.number} to step {other.number}:
          </p>
          <DiffTable delta={result.delta} against={`step ${selected.number}`} testId="compare-diff" />
        </div>
      )}
    </section>
  );
}
