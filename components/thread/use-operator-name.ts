"use client";

import { useCallback, useEffect, useState } from "react";

const KEY = "hitl-console.operator-name";
export const DEFAULT_OPERATOR = "operator";

/**
 * The name this browser decides under (`forwardedProps.actor`), kept in localStorage. `loaded` turns true once the
 * stored name was read: before that, the server-rendered default is showing.
 */
export function useOperatorName(): { name: string; setName: (name: string) => void; loaded: boolean } {
  const [name, setState] = useState(DEFAULT_OPERATOR);
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    try {
      const stored = window.localStorage.getItem(KEY);
      if (stored !== null) setState(stored);
    } catch {
      // Storage can be off (private mode, policy): the default name still works.
    }
    setLoaded(true);
  }, []);
  const setName = useCallback((next: string) => {
    setState(next);
    try {
      window.localStorage.setItem(KEY, next);
    } catch {
      // See above.
    }
  }, []);
  return { name, setName, loaded };
}
