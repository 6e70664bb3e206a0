"use client";

import { useCallback, useRef, useState } from "react";
import { errorMessage, fetchJson } from "@/components/ui/fetch-json";
import { usePoll } from "@/components/ui/use-poll";
import type { InboxDecisionItem, InboxPage, InboxThreadItem } from "@/lib/db/queries/inbox";
import { type InboxParams, inboxSearch } from "./inbox-query";

export type InboxItem = InboxDecisionItem | InboxThreadItem;
export type InboxPageData = InboxPage<InboxDecisionItem> | InboxPage<InboxThreadItem>;

/** How often the inbox asks for changes. */
export const POLL_MS = 2000;
/** How long a row that just arrived stays highlighted. */
const FRESH_MS = 4000;

export function itemId(item: InboxItem): string {
  return item.kind === "decision" ? item.decision.interruptId : item.thread.threadId;
}

/* Ages grow on every answer; they are recomputed locally, so they must not count as a change. */
const signature = (page: InboxPageData) =>
  JSON.stringify(page, (key, value) => (key === "ageSeconds" ? undefined : value));

export interface LiveInbox {
  page: InboxPageData;
  /** Browser (or server, for the first page) time the page was read: ages count on from it. */
  fetchedAt: number;
  /** 1-based page number. */
  pageNumber: number;
  loading: boolean;
  /** The last refresh failed (the rows shown are the last good ones). */
  error: string | null;
  /** Rows that appeared since the previous answer. */
  fresh: ReadonlySet<string>;
  /** For screen readers: what the last change did. */
  announcement: string;
  next: () => void;
  back: () => void;
}

/**
 * The inbox page, kept live by polling the API every {@link POLL_MS} while the tab is visible. An answer that
 * changes nothing (ages aside) changes no state, so nothing re-renders; a changed answer swaps the rows in place
 * (keyed by id), so nothing flickers. Pagination is a stack of keyset cursors: "Next" pushes, "Back" pops.
 */
export function useLiveInbox(params: InboxParams, initial: InboxPageData, renderedAt: number): LiveInbox {
  const [state, setState] = useState(() => ({
    page: initial,
    fetchedAt: renderedAt,
    sig: signature(initial),
  }));
  const current = useRef(state);
  const [cursors, setCursors] = useState<string[]>([]);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const [announcement, setAnnouncement] = useState("");
  const freshTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const cursor = cursors[cursors.length - 1] ?? null;

  const announce = useCallback((before: InboxPageData, after: InboxPageData) => {
    const had = new Set(before.items.map(itemId));
    const has = new Set(after.items.map(itemId));
    const added = [...has].filter((id) => !had.has(id));
    const gone = [...had].filter((id) => !has.has(id)).length;
    setFresh(new Set(added));
    clearTimeout(freshTimer.current);
    freshTimer.current = setTimeout(() => setFresh(new Set()), FRESH_MS);
    const parts = [added.length && `${added.length} new`, gone && `${gone} gone`].filter(Boolean);
    if (parts.length) setAnnouncement(`Inbox updated: ${parts.join(", ")}.`);
  }, []);

  const load = useCallback(
    async (at: string | null, signal?: AbortSignal, paging = false): Promise<boolean> => {
      try {
        const page = await fetchJson<InboxPageData>(`/api/threads?${inboxSearch(params, at)}`, { signal });
        if (signal?.aborted) return false;
        setError(null);
        const sig = signature(page);
        const prev = current.current;
        if (prev.sig === sig) return true;
        if (!paging) announce(prev.page, page);
        current.current = { page, fetchedAt: Date.now(), sig };
        setState(current.current);
        return true;
      } catch (e) {
        if (!signal?.aborted) setError(errorMessage(e));
        return false;
      }
    },
    [params, announce],
  );

  usePoll(
    async (signal) => {
      await load(cursor, signal);
    },
    { intervalMs: POLL_MS, key: `${inboxSearch(params)}|${cursor}` },
  );

  // The page number moves with the rows: only once the page asked for has arrived (a failed load stays put).
  const go = (stack: string[]) => {
    setLoading(true);
    void load(stack[stack.length - 1] ?? null, undefined, true)
      .then((loaded) => loaded && setCursors(stack))
      .finally(() => setLoading(false));
  };

  return {
    page: state.page,
    fetchedAt: state.fetchedAt,
    pageNumber: cursors.length + 1,
    loading,
    error,
    fresh,
    announcement,
    next: () => state.page.nextCursor && go([...cursors, state.page.nextCursor]),
    back: () => go(cursors.slice(0, -1)),
  };
}
