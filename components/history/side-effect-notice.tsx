import type { SideEffectWarning } from "@/lib/contract/views/history";

const WHAT: Record<SideEffectWarning["code"], string> = {
  "side_effect:refund": "Refund",
  "side_effect:email": "Email",
};

/**
 * Before a fork: the refunds and emails this thread recorded after the checkpoint, which a branch from it may reach
 * again. Effects belong to the thread: a re-run never repeats one, a branch cannot undo one, and a refund or reply
 * approved again on the branch is a new one (refunds only within what is left of the order total).
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
        Could not check which side effects this branch may reach again. The refund ledger still refuses
        refunds beyond the order total.
      </p>
    );
  }
  if (warnings === null) return <p className="text-sm text-slate-600">Checking recorded side effects…</p>;
  if (warnings.length === 0) {
    return (
      <p className="text-sm text-slate-700" data-testid="side-effects-none">
        No refund or email is recorded that a branch from here could reach again.
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
        again is a new refund (only within what is left of the order total) or a new email to the customer.
      </p>
      <ul className="mt-2 list-disc space-y-1 pl-5">
        {warnings.map((w) => (
          <li key={w.recordId} data-code={w.code}>
            <span className="font-semibold">{WHAT[w.code] ?? w.code}:</span> {w.message}
          </li>
        ))}
      </ul>
    </div>
  );
}
