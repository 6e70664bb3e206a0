import { LocalTime } from "@/components/ui/local-time";
import { humanize } from "@/lib/contract/humanize";
import { formatMoney, type ReceiptView } from "@/lib/contract/wire";

const CHANNEL: Record<string, string> = {
  agui: "the thread page",
  decision: "a decision request",
  bulk: "a bulk decision",
  expiry: "its deadline's expiry answer",
  timer: "its timer",
  policy: "the automatic policy",
  system: "the system",
};

/** What one authorization of a receipt allows, in words (an account change's value is a digest: never shown). */
function authorizationText(a: ReceiptView["authorizes"][number]): string {
  const t = a.terms;
  if (a.effect === "refund" && typeof t.amountCents === "number")
    return `refund ${formatMoney(t.amountCents)} to ${String(t.orderId)}`;
  if (a.effect === "voucher" && typeof t.amountCents === "number")
    return `a voucher of ${formatMoney(t.amountCents, String(t.currency ?? "EUR"))}`;
  if (a.effect === "account_change") return `the approved new ${String(t.field)} of the customer's account`;
  return humanize(a.effect);
}

/**
 * The thread's decision receipts: each decision bound to what its decider saw — who, how, when, what it authorized
 * (and whether an effect used it) — and whether its signature verifies here. Money and account changes move only
 * against one of these.
 */
export function ReceiptsPanel({ receipts }: { receipts: ReceiptView[] }) {
  if (receipts.length === 0) return null;
  const broken = receipts.filter((r) => !r.verified).length;
  return (
    <details className="rounded-lg border border-slate-200 bg-white p-4" data-testid="receipts">
      <summary className="cursor-pointer text-sm font-semibold text-slate-900">
        Decision receipts ({receipts.length})
        {broken > 0 ? <span className="ml-2 text-red-800">{broken} do not verify</span> : null}
      </summary>
      <ul className="mt-3 space-y-2 text-sm text-slate-800">
        {receipts.map((r) => (
          <li key={r.id} data-testid="receipt" data-verified={r.verified ? "true" : "false"}>
            <span className="font-medium">{humanize(r.action)}</span> by {r.by} through{" "}
            {CHANNEL[r.channel] ?? r.channel}, <LocalTime iso={r.at} />
            {r.authorizes.length > 0 ? (
              <>
                {" "}
                — authorizes{" "}
                {r.authorizes
                  .map((a) => `${authorizationText(a)}${a.spent ? " (used)" : " (not used)"}`)
                  .join("; ")}
              </>
            ) : null}
            .{" "}
            {r.verified ? (
              <span className="text-emerald-800">Signature verifies (key {r.keyId}).</span>
            ) : (
              <span className="text-red-800">Does not verify: {r.problem}</span>
            )}
          </li>
        ))}
      </ul>
    </details>
  );
}
