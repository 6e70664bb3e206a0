"use client";

import { useEffect, useRef } from "react";

/**
 * Call `tick` every `intervalMs` while the tab is visible: never two at once (the next waits for the previous), at
 * once when the tab becomes visible again, and not at all while `enabled` is false. `tick` gets an AbortSignal that
 * fires on unmount or when `key` changes (a new query), so a stale answer cannot land on a newer view.
 */
export function usePoll(
  tick: (signal: AbortSignal) => Promise<void>,
  { intervalMs, key, enabled = true }: { intervalMs: number; key: string; enabled?: boolean },
): void {
  const latest = useRef(tick);
  latest.current = tick;

  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` restarts the loop for a new query; `tick` is read through the ref.
  useEffect(() => {
    if (!enabled) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;

    const run = async () => {
      clearTimeout(timer);
      if (running || controller.signal.aborted) return;
      running = true;
      try {
        if (document.visibilityState === "visible") await latest.current(controller.signal);
      } catch {
        // The caller reports its own errors; a failed tick is retried on the next one.
      } finally {
        running = false;
        if (!controller.signal.aborted) timer = setTimeout(run, intervalMs);
      }
    };
    const onVisible = () => {
      if (document.visibilityState === "visible") void run();
    };
    timer = setTimeout(run, intervalMs);
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      controller.abort();
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [intervalMs, key, enabled]);
}
