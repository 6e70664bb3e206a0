"use client";

import { useEffect } from "react";

/** Keys that must not be taken from a field being typed in. */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

const CARDS = 'section[data-testid^="decision-"][data-disabled="false"]';

/**
 * Keyboard on the thread page, as in the inbox: j/k move between the open decision cards (to the card's heading), a
 * puts the focus on the current card's answer that acts (approve, send, grant, submit) and r on its reject — Enter
 * then gives it, so approving a decision is two keys, and nothing is answered by one stray key. c claims the current
 * card (its Claim button); n / p open the next / previous thread of the queue (the header's links). Each control
 * marks itself (`data-shortcut` in a card, `data-shortcut-page` on the page), so every key is a visible button.
 * Ignored while typing and with a modifier key held.
 */
export function useDecisionKeys(root: () => HTMLElement | null) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      if (e.key === "n" || e.key === "p") {
        const link = document.querySelector<HTMLElement>(`[data-shortcut-page="${e.key}"]`);
        if (!link) return;
        e.preventDefault();
        link.click();
        return;
      }
      if (e.key === "c") {
        // A card someone else handles is closed, but its Take over button is what c presses.
        const claimable = [
          ...(root()?.querySelectorAll<HTMLElement>('[data-shortcut="c"]:not(:disabled)') ?? []),
        ];
        const control =
          claimable.find((b) => b.closest("section")?.contains(document.activeElement)) ?? claimable[0];
        if (!control) return;
        e.preventDefault();
        // Claiming answers nothing and is undone by another's take-over or its expiry: one key does it.
        control.focus();
        control.click();
        return;
      }
      if (!["j", "k", "a", "r"].includes(e.key)) return;
      const cards = [...(root()?.querySelectorAll<HTMLElement>(CARDS) ?? [])];
      if (cards.length === 0) return;
      const at = cards.findIndex((c) => c.contains(document.activeElement));
      if (e.key === "j" || e.key === "k") {
        const next = at < 0 ? 0 : Math.min(cards.length - 1, Math.max(0, at + (e.key === "j" ? 1 : -1)));
        cards[next]?.querySelector<HTMLElement>("[data-decision-heading]")?.focus();
      } else {
        const card = cards[Math.max(at, 0)];
        const control = card?.querySelector<HTMLElement>(`[data-shortcut="${e.key}"]:not(:disabled)`);
        if (!control) return;
        control.focus();
      }
      e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [root]);
}
