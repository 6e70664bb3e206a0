"use client";

import { useCallback, useRef, useState } from "react";
import { errorMessage, fetchJson } from "@/components/ui/fetch-json";
import { usePoll } from "@/components/ui/use-poll";
import type { HistoryCheckpoint, ThreadHistoryView } from "@/lib/contract/views/history";
import { HISTORY_PAGE_SIZE } from "./paging";

const POLL_MS = 2000;

export interface LiveHistory {
  history: ThreadHistoryView;
  /** Newest first: the live first page, then older pages loaded on demand. */
  checkpoints: HistoryCheckpoint[];
  hasOlder: boolean;
  loadOlder: () => Promise<void>;
  refresh: () => Promise<void>;
  error: string | null;
}

/**
 * A thread's checkpoint tree, kept current by polling its first page (a fork's run, or a decision taken on the
 * thread page, adds checkpoints while this page is open). An unchanged answer changes no state.
 */
export function useHistory(threadId: string, initial: ThreadHistoryView): LiveHistory {
  const [history, setHistory] = useState(initial);
  const [older, setOlder] = useState<{ checkpoints: HistoryCheckpoint[]; cursor: string | null }>({
    checkpoints: [],
    cursor: initial.nextCursor,
  });
  const [error, setError] = useState<string | null>(null);
  const last = useRef(JSON.stringify(initial));
  const base = `/api/threads/${encodeURIComponent(threadId)}/history?limit=${HISTORY_PAGE_SIZE}`;

  const refresh = useCallback(
    async (signal?: AbortSignal) => {
      try {
        const next = await fetchJson<ThreadHistoryView>(base, { signal });
        setError(null);
        const sig = JSON.stringify(next);
        if (sig === last.current) return;
        last.current = sig;
        setHistory(next);
      } catch (e) {
        if (!signal?.aborted) setError(errorMessage(e));
      }
    },
    [base],
  );

  usePoll(refresh, { intervalMs: POLL_MS, key: threadId });

  const loadOlder = async () => {
    if (!older.cursor) return;
    try {
      const page = await fetchJson<ThreadHistoryView>(`${base}&before=${encodeURIComponent(older.cursor)}`);
      setOlder((o) => ({ checkpoints: [...o.checkpoints, ...page.checkpoints], cursor: page.nextCursor }));
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const seen = new Set(history.checkpoints.map((c) => c.checkpointId));
  return {
    history,
    checkpoints: [...history.checkpoints, ...older.checkpoints.filter((c) => !seen.has(c.checkpointId))],
    hasOlder: older.cursor !== null,
    loadOlder,
    refresh: () => refresh(),
    error,
  };
}
