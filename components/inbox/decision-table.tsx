import Link from "next/link";
import { actionLabel } from "@/components/ui/action-label";
import type { InboxDecisionItem } from "@/lib/db/queries/inbox";
import { formatMoney } from "@/lib/wire";
import { ageText } from "./age";
import { TableHead } from "./table-head";

const COLUMNS = [
  { key: "waiting", label: "Waiting" },
  { key: "decision", label: "Decision" },
  { key: "action", label: "Action" },
  { key: "customer", label: "Customer" },
  { key: "order", label: "Order" },
  { key: "amount", label: "Amount", align: "right" as const },
];

/**
 * Pending decisions, oldest first. Each row's link (the decision's title) opens the thread, where it is taken.
 * `ageOf` gives a row's current age in ms (ages tick locally between refreshes).
 */
export function DecisionTable({
  items,
  fresh,
  ageOf,
}: {
  items: InboxDecisionItem[];
  fresh: ReadonlySet<string>;
  ageOf: (item: InboxDecisionItem) => number;
}) {
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
      <table className="min-w-full divide-y divide-slate-200 text-sm" data-testid="inbox-table">
        <caption className="sr-only">Pending decisions, oldest first</caption>
        <TableHead columns={COLUMNS} />
        <tbody className="divide-y divide-slate-100">
          {items.map((item) => {
            const { decision: d, thread: t } = item;
            return (
              <tr
                key={d.interruptId}
                data-testid="inbox-row"
                data-thread-id={t.threadId}
                data-interrupt-id={d.interruptId}
                data-action={d.action}
                className={`transition-colors duration-1000 ${fresh.has(d.interruptId) ? "bg-amber-50" : "hover:bg-slate-50"}`}
              >
                <td className="whitespace-nowrap px-4 py-3 tabular-nums text-slate-700">
                  {ageText(ageOf(item))}
                </td>
                <td className="px-4 py-3">
                  <Link
                    href={`/threads/${t.threadId}`}
                    data-testid="inbox-row-link"
                    className="font-medium text-indigo-800 underline-offset-2 hover:underline"
                  >
                    {d.title ?? t.title}
                  </Link>
                  {d.title && <p className="mt-0.5 line-clamp-1 text-xs text-slate-600">{t.title}</p>}
                </td>
                <td className="whitespace-nowrap px-4 py-3 text-slate-800">{actionLabel(d.action)}</td>
                <td className="px-4 py-3 text-slate-800">{d.customerName ?? "—"}</td>
                <td className="whitespace-nowrap px-4 py-3 font-mono text-xs text-slate-800">
                  {d.orderId ?? t.orderRef ?? "—"}
                </td>
                <td className="whitespace-nowrap px-4 py-3 text-right tabular-nums text-slate-900">
                  {d.amountCents === null ? "—" : formatMoney(d.amountCents, d.currency ?? "EUR")}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
