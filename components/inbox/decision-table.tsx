import Link from "next/link";
import { actionLabel } from "@/components/ui/action-label";
import type { InboxDecisionItem } from "@/lib/contract/inbox";
import { type DecisionFinding, FLAGGING_FINDINGS, formatMoney } from "@/lib/contract/wire";
import { ageText } from "./age";
import { ClaimCell } from "./claim-cell";
import { threadHref } from "./inbox-query";
import { TableHead } from "./table-head";
import { TimeLeft } from "./time-left";

const COLUMNS = [
  { key: "due", label: "Time left" },
  { key: "decision", label: "Decision" },
  { key: "action", label: "Action" },
  { key: "customer", label: "Customer" },
  { key: "order", label: "Order" },
  { key: "amount", label: "Amount", align: "right" as const },
  { key: "handler", label: "Handled by" },
];

/**
 * Columns only some agents fill (an order, a customer, an amount) are shown when a row on the page has one: a view of an
 * agent without orders has no Order column of dashes. Which of them a list shows.
 */
export function filledColumns(items: readonly InboxDecisionItem[]): Set<string> {
  const filled = new Set<string>();
  for (const { decision: d, thread: t } of items) {
    if (d.customerName) filled.add("customer");
    if (d.orderId ?? t.orderRef) filled.add("order");
    if (d.amountCents !== null) filled.add("amount");
  }
  return filled;
}

const OPTIONAL = new Set(["customer", "order", "amount"]);

/* Below the `sm` breakpoint (a phone, 360 px) the table becomes a list: each row a card, the header hidden. */
const cell = "px-4 py-3 max-sm:p-0";

/**
 * Pending decisions, soonest due first. Each row's link (the decision's title) opens the thread, where it is taken;
 * its claim cell says who handles it. With `selection`, each row has a checkbox for bulk decisions; `active` is the
 * row the keyboard is on (j/k). `queue` is the view's query string (see `queueSearch`): the thread opens in it.
 */
export function DecisionTable({
  items,
  fresh,
  ageOf,
  leftOf,
  selection,
  active,
  onChange,
  queue = "",
}: {
  items: InboxDecisionItem[];
  fresh: ReadonlySet<string>;
  ageOf: (item: InboxDecisionItem) => number;
  leftOf: (item: InboxDecisionItem) => number;
  selection?: { selected: ReadonlySet<string>; toggle: (id: string) => void };
  active?: string | null;
  onChange: () => void;
  queue?: string;
}) {
  const filled = filledColumns(items);
  const shown = COLUMNS.filter((c) => !OPTIONAL.has(c.key) || filled.has(c.key));
  const columns = selection
    ? [{ key: "select", label: <span className="sr-only">Select</span> }, ...shown]
    : shown;
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm max-sm:overflow-visible max-sm:border-0 max-sm:bg-transparent max-sm:shadow-none">
      <table className="min-w-full divide-y divide-slate-200 text-sm max-sm:block" data-testid="inbox-table">
        <caption className="sr-only">Pending decisions, soonest due first</caption>
        <TableHead columns={columns} />
        <tbody className="divide-y divide-slate-100 max-sm:block max-sm:space-y-3 max-sm:divide-y-0">
          {items.map((item) => {
            const { decision: d, thread: t } = item;
            const isActive = active === d.interruptId;
            const selected = selection?.selected.has(d.interruptId) ?? false;
            return (
              <tr
                key={d.interruptId}
                data-testid="inbox-row"
                data-thread-id={t.threadId}
                data-interrupt-id={d.interruptId}
                data-action={d.action}
                data-active={isActive ? "true" : undefined}
                data-selected={selected ? "true" : undefined}
                className={`max-sm:flex max-sm:flex-wrap max-sm:gap-x-3 max-sm:gap-y-1 max-sm:rounded-lg max-sm:border max-sm:border-slate-200 max-sm:bg-white max-sm:p-3 ${
                  // Only a fresh row fades: a row always in transition would also fade for a second whenever the
                  // system theme changes (read meanwhile, its text has no contrast).
                  fresh.has(d.interruptId)
                    ? "bg-amber-50 transition-colors duration-1000"
                    : "hover:bg-slate-50"
                } ${isActive ? "outline-2 -outline-offset-2 outline-indigo-600" : ""}`}
              >
                {selection && (
                  <td className={`${cell} w-8`}>
                    <input
                      type="checkbox"
                      checked={selected}
                      onChange={() => selection.toggle(d.interruptId)}
                      aria-label={`Select ${d.title ?? t.title}`}
                      data-testid="row-select"
                      className="size-4"
                    />
                  </td>
                )}
                <td
                  className={`${cell} whitespace-nowrap tabular-nums`}
                  title={`Waiting ${ageText(ageOf(item))}`}
                >
                  <TimeLeft ms={leftOf(item)} escalated={d.escalatedAt !== null} />
                </td>
                <td className={`${cell} max-sm:w-full max-sm:[overflow-wrap:anywhere]`}>
                  <Link
                    href={threadHref(t.threadId, queue)}
                    data-testid="inbox-row-link"
                    className="font-medium text-indigo-800 underline-offset-2 hover:underline"
                  >
                    {d.title ?? t.title}
                  </Link>
                  {d.title && <p className="mt-0.5 line-clamp-1 text-xs text-slate-600">{t.title}</p>}
                  <FindingChips findings={d.findings} />
                  {item.refusal && (
                    <p
                      className="mt-1 w-fit rounded bg-amber-50 px-1.5 text-xs text-amber-900"
                      data-testid="not-yours"
                      data-code={item.refusal.code}
                    >
                      Not for you to approve: {item.refusal.reason}
                    </p>
                  )}
                </td>
                <td className={`${cell} whitespace-nowrap text-slate-800`}>{actionLabel(d.action)}</td>
                {filled.has("customer") && (
                  <td className={`${cell} text-slate-800`}>{d.customerName ?? "—"}</td>
                )}
                {filled.has("order") && (
                  <td className={`${cell} whitespace-nowrap font-mono text-xs text-slate-800`}>
                    {d.orderId ?? t.orderRef ?? "—"}
                  </td>
                )}
                {filled.has("amount") && (
                  <td
                    className={`${cell} whitespace-nowrap text-right tabular-nums text-slate-900`}
                    data-testid="row-amount"
                  >
                    {d.amountCents === null
                      ? "—"
                      : d.currency
                        ? formatMoney(d.amountCents, d.currency)
                        : // An amount whose currency nobody stated is not given one here.
                          (d.amountCents / 100).toFixed(2)}
                  </td>
                )}
                <td className={`${cell} max-sm:w-full`}>
                  <ClaimCell interruptId={d.interruptId} claim={d.claim} onChange={onChange} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The policy's findings of a decision, on its row: what the thread page would show before the click. */
export function FindingChips({ findings }: { findings: DecisionFinding[] | null }) {
  const shown = (findings ?? []).filter((f) => f.severity !== "info");
  if (shown.length === 0) return null;
  return (
    <ul className="mt-1 flex flex-wrap gap-1" data-testid="row-findings" aria-label="Policy findings">
      {shown.map((f) => (
        <li
          key={f.code}
          data-code={f.code}
          className={`w-fit rounded px-1.5 text-xs ${
            FLAGGING_FINDINGS.includes(f.code)
              ? "bg-red-50 font-semibold text-red-900 ring-1 ring-red-300"
              : "bg-amber-50 text-amber-950"
          }`}
        >
          {f.message}
        </li>
      ))}
    </ul>
  );
}
