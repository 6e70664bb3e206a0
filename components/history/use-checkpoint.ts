"use client";

import { useEffect, useState } from "react";
import { errorMessage, fetchJson } from "@/components/ui/fetch-json";
import type { CheckpointView } from "@/lib/contract/views/checkpoint";

/**
 * One checkpoint's view, fetched when `checkpointId` or `version` changes (the tree bumps `version` when something
 * about the checkpoint moved: an answer, a new child). The previous view stays on screen while the next one loads.
 */
export function useCheckpoint(threadId: string, checkpointId: string | null, version: string) {
  const [view, setView] = useState<CheckpointView | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is a refetch trigger, not an input.
  useEffect(() => {
    if (!checkpointId) return;
    const controller = new AbortController();
    setLoading(true);
    setError(null);
    fetchJson<CheckpointView>(
      `/api/threads/${encodeURIComponent(threadId)}/checkpoints/${encodeURIComponent(checkpointId)}`,
      { signal: controller.signal },
    )
      .then(setView)
      .catch((e) => {
        if (!controller.signal.aborted) setError(errorMessage(e));
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
  }, [threadId, checkpointId, version]);

  return { view, loading, error };
}
