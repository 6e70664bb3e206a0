"use client";

import { useEffect } from "react";

/** Keys that must not be taken from a field being typed in. */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/**
 * Keyboard triage of the inbox: j/k move down/up, x selects the current row, a/r ask to approve/reject the
 * selection (the current row when nothing is selected), Enter opens the current row's thread. Ignored while typing
 * and with a modifier key held.
 */
export function useTriageKeys(handlers: {
  move: (delta: 1 | -1) => void;
  toggle: () => void;
  decide: (verb: "approve" | "reject") => void;
  open: () => void;
  enabled: boolean;
}) {
  useEffect(() => {
    if (!handlers.enabled) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      const action = {
        j: () => handlers.move(1),
        k: () => handlers.move(-1),
        x: () => handlers.toggle(),
        a: () => handlers.decide("approve"),
        r: () => handlers.decide("reject"),
      }[e.key];
      if (action) {
        e.preventDefault();
        action();
      } else if (e.key === "Enter" && (e.target === document.body || e.target === null)) {
        handlers.open();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [handlers]);
}
