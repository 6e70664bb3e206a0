"use client";

import { useEffect, useState } from "react";
import { fetchJson } from "@/components/ui/fetch-json";
import type { SideEffectWarning } from "@/lib/contract/views/history";

/** What a fork from this checkpoint would reach again: `warnings` is null while loading. */
export function useSideEffects(threadId: string, checkpointId: string, version: string) {
  const [warnings, setWarnings] = useState<SideEffectWarning[] | null>(null);
  const [failed, setFailed] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is a refetch trigger, not an input.
  useEffect(() => {
    const controller = new AbortController();
    setWarnings(null);
    setFailed(false);
    fetchJson<{ warnings: SideEffectWarning[] }>(
      `/api/threads/${encodeURIComponent(threadId)}/checkpoints/${encodeURIComponent(checkpointId)}/side-effects`,
      { signal: controller.signal },
    )
      .then((r) => setWarnings(r.warnings))
      .catch(() => {
        if (!controller.signal.aborted) setFailed(true);
      });
    return () => controller.abort();
  }, [threadId, checkpointId, version]);
  return { warnings, failed };
}
