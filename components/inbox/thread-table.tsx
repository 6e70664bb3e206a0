import Link from "next/link";
import { actionLabel } from "@/components/ui/action-label";
import { StatusBadge } from "@/components/ui/status-badge";
import type { InboxThreadItem } from "@/lib/contract/inbox";
import { ageText } from "./age";
import { TableHead } from "./table-head";

// Below 640 px each row is a card in a list (like the decisions' table): no sideways scrolling on a phone.
const cell = "px-4 py-3 max-sm:p-0";

const COLUMNS = [
  { key: "thread", label: "Thread" },
  { key: "order", label: "Order" },
  { key: "status", label: "Status" },
  { key: "waiting-for", label: "Waiting for" },
  { key: "updated", label: "Updated" },
  { key: "history", label: <span className="sr-only">History</span> },
];

/** Threads, most recently updated first, with what each waits for and links to the thread and its history. */
export function ThreadTable({
  items,
  fresh,
  now,
}: {
  items: InboxThreadItem[];
  fresh: ReadonlySet<string>;
  now: number;
}) {
  // An Order column only when a thread on the page has an order (an agent without orders shows none).
  const hasOrder = items.some(({ thread }) => thread.orderRef);
  const columns = hasOrder ? COLUMNS : COLUMNS.filter((c) => c.key !== "order");
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm max-sm:overflow-visible max-sm:border-0 max-sm:bg-transparent max-sm:shadow-none">
      <table className="min-w-full divide-y divide-slate-200 text-sm max-sm:block" data-testid="thread-table">
        <caption className="sr-only">Threads, most recently updated first</caption>
        <TableHead columns={columns} />
        <tbody className="divide-y divide-slate-100 max-sm:block max-sm:space-y-3 max-sm:divide-y-0">
          {items.map(({ thread: t, pendingDecisions }) => (
            <tr
              key={t.threadId}
              data-testid="thread-row"
              data-thread-id={t.threadId}
              className={`max-sm:flex max-sm:flex-wrap max-sm:items-center max-sm:gap-x-3 max-sm:gap-y-1 max-sm:rounded-lg max-sm:border max-sm:border-slate-200 max-sm:bg-white max-sm:p-3 ${
                fresh.has(t.threadId) ? "bg-amber-50" : "hover:bg-slate-50"
              }`}
            >
              <td className={`${cell} max-sm:w-full max-sm:[overflow-wrap:anywhere]`}>
                <Link
                  href={`/threads/${t.threadId}`}
                  className="font-medium text-indigo-800 underline-offset-2 hover:underline"
                >
                  {t.title}
                </Link>
              </td>
              {hasOrder && (
                <td className={`${cell} whitespace-nowrap font-mono text-xs text-slate-800`}>
                  {t.orderRef ?? "—"}
                </td>
              )}
              <td className={cell}>
                <StatusBadge status={t.status} />
              </td>
              <td className={`${cell} text-slate-800`}>
                {pendingDecisions.length === 0
                  ? "—"
                  : pendingDecisions.map((d) => actionLabel(d.action)).join(", ")}
              </td>
              <td className={`${cell} whitespace-nowrap tabular-nums text-slate-700`}>
                {ageText(now - Date.parse(t.updatedAt))} ago
              </td>
              <td className={`${cell} whitespace-nowrap`}>
                <Link
                  href={`/threads/${t.threadId}/history`}
                  className="text-indigo-800 underline underline-offset-2"
                  aria-label={`History of ${t.title}`}
                >
                  History
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
