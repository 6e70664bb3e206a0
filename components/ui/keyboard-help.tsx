"use client";

import { useEffect, useRef } from "react";

/** Every key of every page, as the pages' own handlers take them (the inbox's and the thread page's hooks). */
export const KEYBOARD_SHORTCUTS: { page: string; keys: [keys: string[], what: string][] }[] = [
  { page: "Every page", keys: [[["?"], "Show or hide this list"]] },
  {
    page: "Inbox",
    keys: [
      [["j", "k"], "Next / previous row"],
      [["x"], "Select the row (or clear it)"],
      [["a"], "Approve the selection, or the row — asks first"],
      [["r"], "Reject the selection, or the row — asks for a reason"],
      [["Enter"], "Open the row's thread"],
    ],
  },
  {
    page: "Thread page",
    keys: [
      [["j", "k"], "Next / previous open decision"],
      [["a"], "Go to the decision's answer that acts (approve, send, submit)"],
      [["r"], "Go to the decision's reject answer or its reason"],
      [["Enter"], "Give the answer you are on — the same checks as a click"],
      [["c"], "Claim the decision, or take it over"],
      [["n", "p"], "Next / previous thread in the queue (or in the inbox view you came from)"],
    ],
  },
];

/** Keys that must not be taken from a field being typed in. */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/**
 * The list of keyboard shortcuts: a button in the header on every page, and `?` (outside a text field) opens it. A
 * modal dialog (Escape or the button closes it, focus returns where it was).
 */
export function KeyboardHelp() {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "?" || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      const d = dialog.current;
      if (!d) return;
      e.preventDefault();
      if (d.open) d.close();
      else d.showModal();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return (
    <>
      <button
        type="button"
        onClick={() => dialog.current?.showModal()}
        className="shrink-0 rounded-md px-2 py-1 text-sm font-medium text-slate-700 ring-1 ring-inset ring-slate-300 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600"
        aria-keyshortcuts="?"
        aria-haspopup="dialog"
        data-testid="keys-button"
      >
        <span aria-hidden="true">?</span>
        <span className="sr-only">Keyboard shortcuts</span>
      </button>
      <dialog
        ref={dialog}
        aria-labelledby="keys-heading"
        className="m-auto w-[36rem] max-w-[calc(100vw-2rem)] rounded-lg bg-white p-0 text-slate-900 shadow-xl ring-1 ring-slate-300 backdrop:bg-slate-900/40"
        data-testid="keys-dialog"
      >
        <div className="max-h-[80vh] space-y-4 overflow-y-auto p-5">
          <div className="flex items-center justify-between gap-4">
            <h2 id="keys-heading" className="text-lg font-semibold">
              Keyboard shortcuts
            </h2>
            <button
              type="button"
              onClick={() => dialog.current?.close()}
              className="rounded-md px-3 py-1 text-sm font-semibold text-slate-900 ring-1 ring-inset ring-slate-300 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600"
              data-testid="keys-close"
            >
              Close
            </button>
          </div>
          <p className="text-sm text-slate-700">
            Keys do nothing while you type in a field. Every key has a button or link on its page.
          </p>
          {KEYBOARD_SHORTCUTS.map((group) => (
            <section key={group.page} aria-label={group.page}>
              <h3 className="text-sm font-semibold text-slate-900">{group.page}</h3>
              <dl className="mt-1 divide-y divide-slate-100 text-sm">
                {group.keys.map(([keys, what]) => (
                  <div key={keys.join()} className="flex gap-4 py-1.5" data-testid="keys-row">
                    <dt className="w-20 shrink-0">
                      {keys.map((k, i) => (
                        <span key={k}>
                          {i > 0 && " / "}
                          <kbd className="rounded border border-slate-300 bg-slate-50 px-1.5 font-mono text-xs">
                            {k}
                          </kbd>
                        </span>
                      ))}
                    </dt>
                    <dd className="text-slate-700">{what}</dd>
                  </div>
                ))}
              </dl>
            </section>
          ))}
        </div>
      </dialog>
    </>
  );
}
