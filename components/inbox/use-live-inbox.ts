"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage, fetchJson } from "@/components/ui/fetch-json";
import { appErrorOf } from "@/lib/contract/errors";
import type { InboxDecisionItem, InboxPage, InboxThreadItem } from "@/lib/contract/inbox";
import { type InboxParams, inboxSearch } from "./inbox-query";

export type InboxItem = InboxDecisionItem | InboxThreadItem;
export type InboxPageData = InboxPage<InboxDecisionItem> | InboxPage<InboxThreadItem>;

/** How often the inbox asks for changes while the live stream is down. */
export const POLL_MS = 2000;
/** How long the stream may stay down before the inbox falls back to polling. */
const STREAM_GRACE_MS = 3000;
/** Changes that arrive together are read as one refresh. */
const COALESCE_MS = 60;
/** How long a row that just arrived stays highlighted. */
const FRESH_MS = 4000;

export function itemId(item: InboxItem): string {
  return item.kind === "decision" ? item.decision.interruptId : item.thread.threadId;
}

/* Ages and times left tick on every answer; they are recomputed locally, so they must not count as a change. */
const signature = (page: InboxPageData) =>
  JSON.stringify(page, (key, value) => (key === "ageSeconds" || key === "secondsLeft" ? undefined : value));

/** How the inbox hears of changes: the server's stream, polling while the stream is down, or connecting. */
export type LiveMode = "connecting" | "stream" | "polling";

export interface LiveInbox {
  page: InboxPageData;
  /** Browser (or server, for the first page) time the page was read: ages count on from it. */
  fetchedAt: number;
  /** 1-based page number. */
  pageNumber: number;
  loading: boolean;
  /** The last refresh failed (the rows shown are the last good ones). */
  error: string | null;
  /** The server did not answer (or failed): the list is the last one received. */
  down: boolean;
  mode: LiveMode;
  /** Rows that appeared since the previous answer. */
  fresh: ReadonlySet<string>;
  /** For screen readers: what the last change did. */
  announcement: string;
  next: () => void;
  back: () => void;
  /** Read the page again now (after an action of one's own). */
  refresh: () => void;
}

/**
 * The inbox page, kept live by the server's stream of inbox changes (`/api/inbox/stream`, fed by LISTEN/NOTIFY):
 * any change re-reads the page shown, so a decision taken in another tab or on another instance disappears within
 * the time of one page read. The browser's EventSource reconnects by itself with the last change id; while the
 * stream stays down the page polls every {@link POLL_MS} — and says so. An answer that changes nothing (ages aside)
 * changes no state; a changed one swaps the rows in place (keyed by id). Pagination is a stack of keyset cursors.
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
  const [down, setDown] = useState(false);
  const [mode, setMode] = useState<LiveMode>("connecting");
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const [announcement, setAnnouncement] = useState("");
  const freshTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const cursor = cursors[cursors.length - 1] ?? null;
  const cursorRef = useRef(cursor);
  cursorRef.current = cursor;

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
        setDown(false);
        const sig = signature(page);
        const prev = current.current;
        if (prev.sig === sig) return true;
        if (!paging) announce(prev.page, page);
        current.current = { page, fetchedAt: Date.now(), sig };
        setState(current.current);
        return true;
      } catch (e) {
        if (!signal?.aborted) {
          setError(errorMessage(e));
          // No answer, or the server failing (5xx): the connection is lost, not the request refused.
          setDown((appErrorOf(e)?.status ?? 500) >= 500);
        }
        return false;
      }
    },
    [params, announce],
  );

  // One read at a time; a change heard while reading asks for one more read after it.
  const reading = useRef<Promise<unknown> | null>(null);
  const again = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const refresh = useCallback(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(function run() {
      if (reading.current) {
        again.current = true;
        return;
      }
      reading.current = load(cursorRef.current).finally(() => {
        reading.current = null;
        if (again.current) {
          again.current = false;
          run();
        }
      });
    }, COALESCE_MS);
  }, [load]);

  useEffect(() => {
    let poll: ReturnType<typeof setInterval> | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const startPolling = () => {
      setMode("polling");
      if (!poll) poll = setInterval(() => document.visibilityState === "visible" && refresh(), POLL_MS);
    };
    const stopPolling = () => {
      clearInterval(poll);
      poll = undefined;
      clearTimeout(grace);
      grace = undefined;
    };
    const source = new EventSource("/api/inbox/stream");
    let opened = false;
    source.addEventListener("open", () => {
      stopPolling();
      setMode("stream");
      // Whatever changed while the stream was being (re)opened.
      if (opened) refresh();
      opened = true;
    });
    for (const type of ["changes", "reset"]) source.addEventListener(type, () => refresh());
    source.addEventListener("error", () => {
      // EventSource reconnects by itself (the server asks for 1 s); poll only if it stays down.
      if (source.readyState === EventSource.CLOSED) startPolling();
      else if (!grace && !poll) {
        setMode("connecting");
        grace = setTimeout(startPolling, STREAM_GRACE_MS);
      }
    });
    grace = setTimeout(() => source.readyState !== EventSource.OPEN && startPolling(), STREAM_GRACE_MS);
    return () => {
      source.close();
      stopPolling();
      clearTimeout(timer.current);
    };
  }, [refresh]);

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
    down,
    mode,
    fresh,
    announcement,
    next: () => state.page.nextCursor && go([...cursors, state.page.nextCursor]),
    back: () => go(cursors.slice(0, -1)),
    refresh,
  };
}
