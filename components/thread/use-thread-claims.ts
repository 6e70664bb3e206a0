"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { fetchJson } from "@/components/ui/fetch-json";
import type { ClaimView } from "@/lib/contract/views/claims";

/**
 * Who is handling each of this thread's pending decisions, kept live by the inbox stream (`/api/inbox/stream`, fed by
 * LISTEN/NOTIFY): a change that names this thread — claimed, released, taken over, decided — reads the thread's
 * claims again, so another operator's claim shows within a page read of its commit. Keyed by interrupt id.
 */
export function useThreadClaims(
  threadId: string,
  pendingKey: string,
  initial: readonly ClaimView[],
  /** Told when a change names this thread (decided or claimed elsewhere): the page re-reads its state at once. */
  onThreadChange: () => void = () => {},
  /** Whether this reader follows the claims (those who may answer); a viewer's page follows only the changes. */
  readsClaims = true,
): { claims: Record<string, ClaimView>; refresh: () => void; live: boolean } {
  const [claims, setClaims] = useState<readonly ClaimView[]>(initial);
  const [live, setLive] = useState(false);
  const reading = useRef(false);
  const changed = useRef(onThreadChange);
  changed.current = onThreadChange;
  const again = useRef(false);

  const refresh = useCallback(() => {
    if (!readsClaims) return;
    if (reading.current) {
      again.current = true;
      return;
    }
    reading.current = true;
    fetchJson<{ claims: ClaimView[] }>(`/api/inbox/claims?threadId=${encodeURIComponent(threadId)}`)
      .then((body) => setClaims(body.claims))
      .catch(() => {}) // advisory: the last known claims stay; the ledger decides anyway
      .finally(() => {
        reading.current = false;
        if (again.current) {
          again.current = false;
          refresh();
        }
      });
  }, [threadId, readsClaims]);

  // New pending decisions (a run raised them): read their claims.
  const firstKey = useRef(pendingKey);
  useEffect(() => {
    if (pendingKey === firstKey.current) return;
    firstKey.current = pendingKey;
    refresh();
  }, [pendingKey, refresh]);

  useEffect(() => {
    if (!pendingKey) return;
    const source = new EventSource("/api/inbox/stream");
    let opened = false;
    source.addEventListener("open", () => {
      if (opened) refresh(); // whatever changed while the stream was being reopened
      opened = true;
    });
    // Following from the stream's first frame on (`ready`, or after a reconnect what was missed): by then the server
    // has subscribed this stream to the feed.
    source.addEventListener("ready", () => {
      setLive(true);
      refresh(); // anything claimed between the server render and the subscription
    });
    source.addEventListener("error", () => setLive(false));
    source.addEventListener("reset", () => {
      setLive(true);
      refresh();
    });
    source.addEventListener("changes", (event) => {
      setLive(true);
      let changes: { threadId?: string }[] = [];
      try {
        changes = (JSON.parse((event as MessageEvent<string>).data) as { changes: { threadId?: string }[] })
          .changes;
      } catch {
        return;
      }
      if (changes.some((c) => c.threadId === threadId)) {
        refresh();
        changed.current();
      }
    });
    return () => {
      source.close();
      setLive(false);
    };
  }, [threadId, pendingKey, refresh]);

  return { claims: Object.fromEntries(claims.map((c) => [c.interruptId, c])), refresh, live };
}
