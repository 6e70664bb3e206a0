"use client";

import { useCallback, useEffect, useState } from "react";
import { fetchJson } from "@/components/ui/fetch-json";
import { usePoll } from "@/components/ui/use-poll";
import type { EffectView } from "@/lib/contract/wire";

const FINAL = new Set(["delivered", "failed", "unconfirmed", "handled"]);

/**
 * The thread's side effects, kept live: effects are delivered outside runs (by the dispatcher), so the page asks
 * for them while any is on its way or a run may be recording new ones, and again whenever the event log moves.
 */
export function useLiveEffects(threadId: string, initial: EffectView[], lastSeq: number, status: string) {
  const [effects, setEffects] = useState(initial);
  const refresh = useCallback(
    async (signal?: AbortSignal) => {
      const body = await fetchJson<{ effects: EffectView[] }>(`/api/threads/${threadId}/effects`, { signal });
      setEffects(body.effects);
    },
    [threadId],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new event (lastSeq) may mean a newly recorded effect.
  useEffect(() => {
    void refresh().catch(() => {});
  }, [refresh, lastSeq]);
  const moving = status === "running" || effects.some((e) => !FINAL.has(e.status));
  usePoll(refresh, { intervalMs: 1_000, key: threadId, enabled: moving });
  return {
    effects,
    refresh,
    replace: (next: EffectView) => setEffects((all) => all.map((e) => (e.id === next.id ? next : e))),
  };
}
