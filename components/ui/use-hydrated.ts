"use client";

import { useSyncExternalStore } from "react";

const subscribe = () => () => {};

/**
 * False during the server render and hydration, true once React runs in the browser. Pages put it on their root as
 * `data-ready`, so tests (and people) wait for it: clicks before hydration are lost.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}
