"use client";

import { useState } from "react";
import { useUser } from "@/components/auth/user-context";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { controlClass, FieldLabel } from "@/components/ui/field";
import { hasRole } from "@/lib/contract/roles";
import type { ThreadViewJson } from "./thread-state";

/**
 * A thread no deployed version can run (or whose run ended with a decision still pending): why, and what a
 * supervisor can do — branch it onto the current version from where it stopped, or close it with a note. Others are
 * told to ask a supervisor.
 */
export function AttentionPanel({ view }: { view: ThreadViewJson }) {
  const supervisor = hasRole(useUser()?.role, "supervisor");
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const attention = view.attention;
  if (!attention) return null;
  const base = `/api/threads/${encodeURIComponent(view.threadId)}`;
  const act = async (path: string, body: unknown) => {
    setBusy(true);
    setProblem(null);
    try {
      await postJson(`${base}/${path}`, body);
      window.location.reload();
    } catch (e) {
      setProblem(errorMessage(e));
      setBusy(false);
    }
  };
  return (
    <section
      aria-labelledby="attention-heading"
      className="space-y-3 rounded-lg border border-orange-300 bg-orange-50 p-5 text-sm text-orange-950"
      data-testid="attention-panel"
    >
      <h2 id="attention-heading" className="text-base font-semibold">
        This thread needs a supervisor
      </h2>
      <p data-testid="attention-reason">{attention.reason}</p>
      {!supervisor ? (
        <p>Ask a supervisor to move it onto the current version or to close it.</p>
      ) : (
        <div className="space-y-3">
          {attention.canMigrate && (
            <Button disabled={busy} data-testid="migrate-thread" onClick={() => void act("migrate", {})}>
              Move it to version {attention.currentVersion} by its declared migration
            </Button>
          )}
          {attention.currentVersion && view.checkpointId && (
            <Button
              disabled={busy}
              data-testid="fork-onto-current"
              onClick={() => void act("fork", { checkpointId: view.checkpointId, onto: "current" })}
            >
              Continue on version {attention.currentVersion} from where it stopped
            </Button>
          )}
          <form
            className="space-y-2"
            onSubmit={(e) => {
              e.preventDefault();
              void act("close", { note });
            }}
          >
            <FieldLabel htmlFor="close-note" hint="(required, kept in the audit trail)">
              Or close it with a note
            </FieldLabel>
            <textarea
              id="close-note"
              data-testid="close-note"
              rows={2}
              maxLength={2000}
              value={note}
              onChange={(e) => setNote(e.target.value)}
              className={controlClass}
            />
            <Button
              type="submit"
              variant="secondary"
              disabled={busy || !note.trim()}
              data-testid="close-thread"
            >
              Close the thread
            </Button>
          </form>
        </div>
      )}
      {problem && (
        <p role="alert" className="rounded-md bg-red-50 p-2 text-red-800">
          {problem}
        </p>
      )}
    </section>
  );
}
