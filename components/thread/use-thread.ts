"use client";

import type { ResumeEntry } from "@ag-ui/client";
import { useCallback, useEffect, useState, useSyncExternalStore } from "react";
import { foldRunEvents, type StreamEvent } from "./apply-event";
import { decideCard } from "./decide-card";
import { sendRun } from "./send-run";
import { ThreadConnection } from "./thread-connection";
import { initialThreadState, type ThreadState, type ThreadViewJson } from "./thread-state";
import { ThreadStore } from "./thread-store";

export interface ThreadHandle {
  state: ThreadState;
  /** Resume with answers to every pending decision (or start the run when `resume` is absent). */
  send: (request: { resume?: ResumeEntry[]; actor: string }) => Promise<boolean>;
  /** Answer one of several pending decisions on its own (parallel reviews by different people). */
  decide: (interruptId: string, answer: unknown) => Promise<void>;
  dismissError: () => void;
  /** The thread changed elsewhere: re-read it now. */
  nudge: () => void;
}

/**
 * The thread page's live state: the server render (view + the active run's logged events) to start with, then
 * every event from this page's own runs and from the follower, deduplicated by seq.
 */
export function useThread(view: ThreadViewJson, runEvents: StreamEvent[]): ThreadHandle {
  const [connection] = useState(
    () =>
      new ThreadConnection(
        view.threadId,
        new ThreadStore(foldRunEvents(initialThreadState(view), runEvents)),
      ),
  );
  const { store } = connection;
  const state = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);

  useEffect(() => {
    connection.start();
    return () => connection.stop();
  }, [connection]);

  const send = useCallback(
    (request: { resume?: ResumeEntry[]; actor: string }) => sendRun(connection, request),
    [connection],
  );
  const decide = useCallback(
    (interruptId: string, answer: unknown) => decideCard(connection, interruptId, answer),
    [connection],
  );
  const dismissError = useCallback(() => store.update((s) => ({ ...s, error: null })), [store]);
  const nudge = useCallback(() => connection.nudge(), [connection]);
  return { state, send, decide, dismissError, nudge };
}
