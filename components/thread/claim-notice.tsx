"use client";

import { useState } from "react";
import { Button } from "@/components/ui/button";
import { errorMessage, postJson } from "@/components/ui/fetch-json";
import { useHydrated } from "@/components/ui/use-hydrated";
import type { ClaimView } from "@/lib/contract/views/claims";

/** Hours and minutes: the viewer's zone once in the browser, UTC in the server render (no hydration mismatch). */
function timeOf(iso: string, local: boolean): string {
  const options: Intl.DateTimeFormatOptions = { hour: "2-digit", minute: "2-digit" };
  const date = new Date(iso);
  return local
    ? date.toLocaleTimeString("en-GB", options)
    : `${date.toLocaleTimeString("en-GB", { ...options, timeZone: "UTC" })} UTC`;
}

/**
 * Claim a decision (`claim`, refused while someone else handles it) or take it over from them (`take_over`): the
 * request, its busy state and the refusal in the operator's words. `done` runs after it either way when `always`,
 * else only after it succeeded (the claims are read again).
 */
function useClaimAction(interruptId: string, mode: "claim" | "take_over", done: () => void, always: boolean) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    let ok = false;
    try {
      await postJson("/api/inbox/claims", { interruptId, mode });
      ok = true;
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
      if (ok || always) done();
    }
  };
  return { busy, error, run };
}

/**
 * Who is handling a pending decision, above its form. Someone else's claim closes the form until this operator takes
 * it over (claims are advisory: the ledger would accept their answer, but two people should not answer one item
 * unknowingly); one's own just says so.
 */
export function ClaimNotice({
  claim,
  mine,
  onTakenOver,
}: {
  claim: ClaimView;
  mine: boolean;
  onTakenOver: () => void;
}) {
  const { busy, error, run: takeOver } = useClaimAction(claim.interruptId, "take_over", onTakenOver, false);
  const since = <time dateTime={claim.claimedAt}>{timeOf(claim.claimedAt, useHydrated())}</time>;
  if (mine) {
    return (
      <p className="text-sm text-slate-700" data-testid="thread-claim" data-claimed-by={claim.userLabel}>
        You are handling this since {since}.
      </p>
    );
  }
  return (
    <div
      className="flex flex-wrap items-center gap-3 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950"
      data-testid="thread-claim"
      data-claimed-by={claim.userLabel}
    >
      <p role="status" className="min-w-0 flex-1">
        Being handled by <bdi className="font-semibold">{claim.userLabel}</bdi> since {since} — take over to
        answer.
      </p>
      <ClaimControl busy={busy} error={error} onClick={takeOver} testId="thread-take-over">
        Take over
      </ClaimControl>
    </div>
  );
}

/** The claim's button (the `c` key presses it) and, under it, a refusal in the operator's words. */
function ClaimControl({
  busy,
  error,
  onClick,
  testId,
  children,
}: {
  busy: boolean;
  error: string | null;
  onClick: () => Promise<void>;
  testId: string;
  children: string;
}) {
  return (
    <>
      <Button
        variant="secondary"
        disabled={busy}
        onClick={() => void onClick()}
        data-testid={testId}
        data-shortcut="c"
        aria-keyshortcuts="c"
      >
        {children}
      </Button>
      {error && (
        <p role="alert" className="w-full text-red-800" data-testid="thread-claim-error">
          {error}
        </p>
      )}
    </>
  );
}

/**
 * Nobody handles this decision yet: say so, and let this operator claim it (c), so a colleague opening it sees who
 * has it. Claiming answers nothing; a claim someone else took meanwhile is reported, not overwritten.
 */
export function ClaimButton({ interruptId, onClaimed }: { interruptId: string; onClaimed: () => void }) {
  // Refused or not, the claims are read again: a refusal means someone else took it meanwhile.
  const { busy, error, run: claim } = useClaimAction(interruptId, "claim", onClaimed, true);
  return (
    <div className="flex flex-wrap items-center gap-3 text-sm text-slate-700" data-testid="thread-unclaimed">
      <p className="min-w-0 flex-1">Nobody is handling this yet.</p>
      <ClaimControl busy={busy} error={error} onClick={claim} testId="thread-claim-button">
        Claim
      </ClaimControl>
    </div>
  );
}
