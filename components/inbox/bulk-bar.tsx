"use client";

import { useEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { operatorSentence } from "@/lib/contract/operator-messages";
import type { BulkVerb } from "@/lib/contract/questions/kinds";
import { type DecisionFinding, FLAGGING_FINDINGS } from "@/lib/contract/wire";
import { FindingChips } from "./decision-table";

export interface BulkResult {
  done: { interruptId: string; threadId: string }[];
  refused: { interruptId: string; threadId: string | null; code: string; message: string }[];
}

/**
 * The bulk decision bar: how many items are selected, approve / reject (a/r on the keyboard) with a confirmation
 * that takes one note, and the result — what was done and what was refused, and why. The confirmation names each
 * item's policy findings; approving an item the fraud screening flagged needs a second, explicit step (ticking that
 * it was checked: Space on the box that takes the focus), so `a Enter` alone never approves one.
 */
export function BulkBar({
  selected,
  titleOf,
  findingsOf = () => null,
  problem,
  confirming,
  setConfirming,
  onDone,
}: {
  selected: string[];
  titleOf: (interruptId: string) => string;
  /** The policy's findings of a selected decision (null: none, or not known). */
  findingsOf?: (interruptId: string) => DecisionFinding[] | null;
  /** Why the selection cannot be decided in bulk (mixed or unsupported kinds), or null. */
  problem: string | null;
  confirming: BulkVerb | null;
  setConfirming: (verb: BulkVerb | null) => void;
  onDone: () => void;
}) {
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<BulkResult | null>(null);
  const [checked, setChecked] = useState(false);
  const noteRef = useRef<HTMLTextAreaElement>(null);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const checkRef = useRef<HTMLInputElement>(null);
  const flagged = selected.filter((id) =>
    (findingsOf(id) ?? []).some((f) => FLAGGING_FINDINGS.includes(f.code)),
  );
  const needsCheck = confirming === "approve" && flagged.length > 0;

  useEffect(() => {
    setChecked(false);
    if (confirming === "reject") noteRef.current?.focus();
    else if (confirming === "approve") (checkRef.current ?? confirmRef.current)?.focus();
  }, [confirming]);

  const submit = async () => {
    if (!confirming) return;
    setBusy(true);
    setError(null);
    try {
      const outcome = await postJson<BulkResult>("/api/inbox/bulk", {
        interruptIds: selected,
        verb: confirming,
        ...(note.trim() ? { note: note.trim() } : {}),
      });
      setResult(outcome);
      setConfirming(null);
      setNote("");
      onDone();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="space-y-3">
      {selected.length > 0 && (
        <div
          className="flex flex-wrap items-center gap-3 rounded-lg border border-indigo-200 bg-indigo-50 p-3 text-sm"
          data-testid="bulk-bar"
        >
          <span data-testid="bulk-count">{selected.length} selected</span>
          <Button onClick={() => setConfirming("approve")} disabled={!!problem} data-testid="bulk-approve">
            Approve…
          </Button>
          <Button
            variant="danger"
            onClick={() => setConfirming("reject")}
            disabled={!!problem}
            data-testid="bulk-reject"
          >
            Reject…
          </Button>
          {problem && <span className="text-amber-900">{problem}</span>}
        </div>
      )}
      {confirming && (
        <section
          aria-label={`Confirm: ${confirming} ${selected.length} item(s)`}
          className="space-y-2 rounded-lg border border-slate-300 bg-white p-4"
          data-testid="bulk-confirm"
          onKeyDown={(e) => {
            if (e.key === "Escape") setConfirming(null);
          }}
        >
          <h2 className="font-semibold">
            {confirming === "approve" ? "Approve" : "Reject"} {selected.length} item(s)?
          </h2>
          <ul
            className="max-h-48 list-disc overflow-y-auto pl-5 text-xs text-slate-700"
            data-testid="bulk-items"
          >
            {selected.map((id) => (
              <li key={id}>
                {titleOf(id)}
                <FindingChips findings={findingsOf(id)} />
              </li>
            ))}
          </ul>
          {needsCheck && (
            <label className="flex items-start gap-2 text-sm text-red-900" data-testid="bulk-flagged">
              <input
                ref={checkRef}
                type="checkbox"
                checked={checked}
                onChange={(e) => setChecked(e.target.checked)}
                className="mt-0.5"
                data-testid="bulk-flagged-check"
              />
              <span>
                {flagged.length === 1 ? "One order was" : `${flagged.length} orders were`} flagged by fraud
                screening. I checked {flagged.length === 1 ? "it" : "them"} on the thread page and approve
                anyway.
              </span>
            </label>
          )}
          <label className="block text-sm font-medium" htmlFor="bulk-note">
            Note {confirming === "reject" ? "(required: say why)" : "(optional)"}
          </label>
          <textarea
            id="bulk-note"
            ref={noteRef}
            value={note}
            onChange={(e) => setNote(e.target.value)}
            rows={2}
            maxLength={2000}
            className="w-full rounded border border-slate-300 p-2 text-sm"
            data-testid="bulk-note"
          />
          <div className="flex gap-2">
            <button
              type="button"
              ref={confirmRef}
              onClick={submit}
              disabled={busy || (confirming === "reject" && !note.trim()) || (needsCheck && !checked)}
              className={`inline-flex items-center rounded-md px-3 py-2 text-sm font-semibold text-white shadow-sm focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 disabled:cursor-not-allowed ${
                confirming === "reject"
                  ? "bg-red-700 hover:bg-red-800 disabled:bg-red-300"
                  : "bg-indigo-700 hover:bg-indigo-800 disabled:bg-indigo-300"
              }`}
              data-testid="bulk-confirm-button"
            >
              {busy ? "Deciding…" : `Confirm ${confirming}`}
            </button>
            <Button variant="secondary" onClick={() => setConfirming(null)} data-testid="bulk-cancel">
              Cancel
            </Button>
          </div>
          {error && (
            <p role="alert" className="text-sm text-red-700">
              {error}
            </p>
          )}
        </section>
      )}
      {result && (
        <section
          aria-label="Bulk decision result"
          role="status"
          className="space-y-1 rounded-lg border border-slate-200 bg-white p-4 text-sm"
          data-testid="bulk-result"
        >
          <p className="font-semibold">
            <span data-testid="bulk-done-count">{result.done.length} done</span> /{" "}
            <span data-testid="bulk-refused-count">{result.refused.length} refused</span>
          </p>
          {result.refused.length > 0 && (
            <ul className="list-disc pl-5" data-testid="bulk-refused">
              {result.refused.map((r) => (
                <li key={r.interruptId} data-testid="bulk-refused-item" data-code={r.code}>
                  {titleOf(r.interruptId)}: {operatorSentence(r)}
                </li>
              ))}
            </ul>
          )}
          <button type="button" className="text-xs text-indigo-800 underline" onClick={() => setResult(null)}>
            Dismiss
          </button>
        </section>
      )}
    </div>
  );
}
