"use client";

import Link from "next/link";
import { useEffect, useMemo, useState } from "react";
import { Button } from "@/components/ui/button";
import { StatusBadge } from "@/components/ui/status-badge";
import { useHydrated } from "@/components/ui/use-hydrated";
import type { GraphDrawing } from "@/lib/contract/views/graph";
import type { ThreadHistoryView } from "@/lib/contract/views/history";
import type { EffectView } from "@/lib/contract/wire";
import { BranchLegend } from "./branch-legend";
import { CheckpointDetail } from "./checkpoint-detail";
import { askedCheckpointIds, CheckpointTree } from "./checkpoint-tree";
import { ComparePanel } from "./compare-panel";
import type { ForkResponse } from "./fork-panel";
import { isFiltered, matchesFilter, NO_FILTER, type TimelineFilter, TimelineTools } from "./timeline-tools";
import { useHistory } from "./use-history";

/**
 * Time travel over one thread: the checkpoint tree (live) on the left, the selected checkpoint on the right with
 * its diff, state and "fork from here". The selection is kept in the URL (`?checkpoint=`) so it can be shared.
 */
export function HistoryExplorer({
  threadId,
  initial,
  initialSelection,
  nodes,
  channels,
  forkSchema,
  effects = [],
  drawing = null,
}: {
  /** The thread version's graph, laid out on the server. */
  drawing?: GraphDrawing | null;
  /** The thread's effect ledger (every branch): what each checkpoint's outcome is set against. */
  effects?: readonly EffectView[];
  threadId: string;
  initial: ThreadHistoryView;
  initialSelection: string | null;
  nodes: readonly string[];
  channels: readonly string[];
  /** The agent's editable state as JSON Schema: the fork form's fields. */
  forkSchema?: unknown;
}) {
  const hydrated = useHydrated();
  const live = useHistory(threadId, initial);
  const [selectedId, setSelectedId] = useState(initialSelection ?? initial.headCheckpointId);
  const [forked, setForked] = useState<ForkResponse | null>(null);
  const [filter, setFilter] = useState<TimelineFilter>(NO_FILTER);
  const branchOrder = live.history.branches.map((b) => b.label);
  const selected = live.checkpoints.find((c) => c.checkpointId === selectedId) ?? live.checkpoints[0] ?? null;
  // A filtered timeline lists the matching steps only (the selected one stays shown on the right).
  const asked = useMemo(() => askedCheckpointIds(live.checkpoints), [live.checkpoints]);
  const listed = isFiltered(filter)
    ? live.checkpoints.filter((c) => matchesFilter(c, filter, asked))
    : live.checkpoints;

  const shownId = selected?.checkpointId;
  useEffect(() => {
    if (!shownId) return;
    const url = new URL(window.location.href);
    url.searchParams.set("checkpoint", shownId);
    window.history.replaceState(window.history.state, "", url);
  }, [shownId]);

  const onForked = (result: ForkResponse) => {
    setForked(result);
    setSelectedId(result.checkpointId);
    void live.refresh();
  };

  return (
    <div data-testid="history" data-ready={hydrated ? "true" : "false"} className="space-y-4">
      {/* Live: a fork's run changes the thread's status while this page is open. */}
      <div role="status" className="flex items-center gap-2 text-sm text-slate-700">
        Thread status <StatusBadge status={live.history.status} />
      </div>
      {forked && (
        <p
          role="status"
          className="rounded-md bg-emerald-50 p-3 text-sm text-emerald-900"
          data-testid="fork-result"
        >
          New branch started from step{" "}
          {live.checkpoints.find((c) => c.checkpointId === forked.forkedFrom)?.number ?? "?"}. Its run
          continues in the background and the tree follows it.{" "}
          <Link href={`/threads/${threadId}`} className="font-medium underline underline-offset-2">
            Open the thread
          </Link>{" "}
          to follow the run and take its decisions.
        </p>
      )}
      {live.error && (
        <p className="rounded-md bg-amber-50 p-3 text-sm text-amber-900">
          Could not refresh the history ({live.error}); retrying.
        </p>
      )}
      {live.checkpoints.length === 0 ? (
        <p className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-sm text-slate-700">
          This thread has no checkpoint yet: its first run has not written one. The history fills in as it
          runs.
        </p>
      ) : (
        <div className="grid items-start gap-6 lg:grid-cols-[minmax(0,5fr)_minmax(0,7fr)]">
          <div className="min-w-0 space-y-4">
            <BranchLegend
              branches={live.history.branches}
              checkpoints={live.checkpoints}
              onSelect={setSelectedId}
            />
            <TimelineTools
              checkpoints={live.checkpoints}
              filter={filter}
              onFilter={setFilter}
              selected={selected}
              onSelect={setSelectedId}
              shown={listed.length}
            />
            <CheckpointTree
              askedIds={asked}
              checkpoints={listed}
              branchOrder={branchOrder}
              selectedId={selected?.checkpointId ?? null}
              onSelect={setSelectedId}
            />
            {live.hasOlder && (
              <Button variant="secondary" onClick={() => void live.loadOlder()}>
                Load older checkpoints
              </Button>
            )}
          </div>
          {selected && (
            <div className="min-w-0 lg:sticky lg:top-4">
              <CheckpointDetail
                threadId={threadId}
                summary={selected}
                nodes={nodes}
                channels={channels}
                forkSchema={forkSchema}
                onSelect={setSelectedId}
                onForked={onForked}
                effects={effects}
                forked={live.history.branches.length > 1}
                drawing={drawing}
              />
              <div className="mt-4 rounded-lg border border-slate-200 bg-white p-4">
                <ComparePanel threadId={threadId} checkpoints={live.checkpoints} selected={selected} />
              </div>
            </div>
          )}
        </div>
      )}
    </div>
  );
}
