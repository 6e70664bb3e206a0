import { humanize } from "@/lib/contract/humanize";
import type { SideEffectWarning } from "@/lib/contract/views/history";

/** What a warning is about, from its code (`side_effect:refund` → "Refund"): the agent's kinds, not the shop's. */
function kindOf(code: SideEffectWarning["code"]): string {
  return humanize(code.slice("side_effect:".length).replace(/_/g, " ")) || "Side effect";
}

/**
 * Before a fork: what this thread already did after the checkpoint (the agent says what: a refund, an email, a
 * voucher, a credit…), which a branch from it may reach again. Effects belong to the thread: a re-run never repeats
 * one, a branch cannot undo one, and one approved again on the branch is a new one, as each warning says in the
 * agent's own words. Nothing here names a kind of effect of its own: an agent without refunds reads no refunds.
 */
export function SideEffectNotice({
  warnings,
  failed,
}: {
  warnings: SideEffectWarning[] | null;
  failed: boolean;
}) {
  if (failed) {
    return (
      <p className="text-sm text-amber-900" data-testid="side-effects-unknown">
        Could not check which side effects this branch may reach again. What the thread already recorded is
        never done twice by a re-run, and what a branch approves again is checked against it.
      </p>
    );
  }
  if (warnings === null) return <p className="text-sm text-slate-600">Checking recorded side effects…</p>;
  if (warnings.length === 0) {
    return (
      <p className="text-sm text-slate-700" data-testid="side-effects-none">
        Nothing the thread already did can be reached again by a branch from here.
      </p>
    );
  }
  return (
    <div
      data-testid="side-effect-warnings"
      className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950"
    >
      <p className="font-semibold">This point comes before side effects the thread already performed.</p>
      <p className="mt-1">
        A branch cannot undo them. A branch from here may reach the same steps again: what is approved there
        again is a new one, as each says below.
      </p>
      <ul className="mt-2 list-disc space-y-1 pl-5">
        {warnings.map((w) => (
          <li key={w.recordId} data-code={w.code}>
            <span className="font-semibold">{kindOf(w.code)}:</span> {w.message}
          </li>
        ))}
      </ul>
    </div>
  );
}
