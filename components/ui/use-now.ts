"use client";

import { useEffect, useState } from "react";

/**
 * The current time, ticking every `everyMs`. Starts at `initial` (the server's render time) so the first client render
 * matches the server's HTML, then follows the browser clock.
 */
export function useNow(initial: number, everyMs = 1000): number {
  const [now, setNow] = useState(initial);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}
