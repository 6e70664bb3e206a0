"use client";

import { useState } from "react";
import { useUser } from "@/components/auth/user-context";
import { errorMessage, fetchJson, postJson } from "@/components/ui/fetch-json";
import type { InboxClaim } from "@/lib/contract/inbox";
import { hasRole } from "@/lib/contract/roles";

function timeOf(iso: string): string {
  return new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

const buttonStyle =
  "rounded px-2 py-1 text-xs font-semibold ring-1 ring-inset ring-slate-300 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600";

/**
 * Who is handling a pending decision, and the claim buttons: claim it, release one's own, take it over from someone
 * else (the ledger still decides who wins an answer), or — a supervisor — assign it to an operator by email.
 */
export function ClaimCell({
  interruptId,
  claim,
  onChange,
}: {
  interruptId: string;
  claim: InboxClaim | null;
  onChange: () => void;
}) {
  const user = useUser();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [assigning, setAssigning] = useState(false);
  const [email, setEmail] = useState("");
  const canDecide = hasRole(user?.role, "operator");
  const mine = claim !== null && claim.userId === user?.id;

  const act = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      onChange();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const claimAs = (mode: "claim" | "take_over", assignTo?: string) =>
    act(() => postJson("/api/inbox/claims", { interruptId, mode, ...(assignTo ? { assignTo } : {}) }));
  const release = () =>
    act(() => fetchJson(`/api/inbox/claims/${encodeURIComponent(interruptId)}`, { method: "DELETE" }));

  return (
    <div className="space-y-1" data-testid="claim-cell" data-claimed-by={claim?.userLabel ?? ""}>
      {claim ? (
        <p className="text-xs text-slate-700" data-testid="claim-status">
          {mine ? "You are handling this" : `Being handled by ${claim.userLabel}`} since{" "}
          <time dateTime={claim.claimedAt}>{timeOf(claim.claimedAt)}</time>
        </p>
      ) : (
        <p className="text-xs text-slate-600" data-testid="claim-status">
          Unassigned
        </p>
      )}
      {canDecide && (
        <div className="flex flex-wrap gap-1">
          {!claim && (
            <button
              type="button"
              className={buttonStyle}
              disabled={busy}
              onClick={() => claimAs("claim")}
              data-testid="claim-button"
            >
              Claim
            </button>
          )}
          {mine && (
            <button
              type="button"
              className={buttonStyle}
              disabled={busy}
              onClick={release}
              data-testid="release-button"
            >
              Release
            </button>
          )}
          {claim && !mine && (
            <button
              type="button"
              className={buttonStyle}
              disabled={busy}
              onClick={() => claimAs("take_over")}
              data-testid="take-over-button"
            >
              Take over
            </button>
          )}
          {hasRole(user?.role, "supervisor") && !assigning && (
            <button
              type="button"
              className={buttonStyle}
              onClick={() => setAssigning(true)}
              data-testid="assign-button"
            >
              Assign…
            </button>
          )}
        </div>
      )}
      {assigning && (
        <form
          className="flex gap-1"
          onSubmit={(e) => {
            e.preventDefault();
            void claimAs("claim", email.trim()).then(() => setAssigning(false));
          }}
        >
          <label className="sr-only" htmlFor={`assign-${interruptId}`}>
            Assign to (operator email)
          </label>
          <input
            id={`assign-${interruptId}`}
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            placeholder="operator@…"
            className="w-36 rounded border border-slate-300 px-1 text-xs"
            data-testid="assign-email"
          />
          <button type="submit" className={buttonStyle} disabled={busy} data-testid="assign-submit">
            Assign
          </button>
        </form>
      )}
      {error && (
        <p role="alert" className="text-xs text-red-700" data-testid="claim-error">
          {error}
        </p>
      )}
    </div>
  );
}
