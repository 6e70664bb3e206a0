import { LocalTime } from "@/components/ui/local-time";
import { humanize } from "@/lib/contract/humanize";
import type { RefundApprovalPayload } from "@/lib/contract/questions";
import { formatMoney } from "@/lib/contract/wire";

const SEVERITY: Record<string, string> = {
  block: "bg-red-100 text-red-900 ring-red-300",
  warning: "bg-amber-100 text-amber-900 ring-amber-300",
  info: "bg-sky-100 text-sky-900 ring-sky-300",
};

/** What the operator needs to judge a refund: order, customer, items, amount, reason and the policy's findings. */
export function RefundDetails({ payload }: { payload: RefundApprovalPayload }) {
  const { order, customer, requested } = payload;
  return (
    <div className="space-y-4 text-sm">
      <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2">
        <Item label="Requested amount">
          <span className="text-base font-semibold" data-testid="requested-amount">
            {formatMoney(requested.amountCents, requested.currency)}
          </span>
          <span className="text-slate-600">
            {" "}
            of {formatMoney(order.total.amountCents, order.total.currency)}
          </span>
        </Item>
        <Item label="Reason">
          <bdi>{payload.reason || "—"}</bdi>
        </Item>
        <Item label="Order">
          <span className="font-mono">{order.id}</span>, placed <LocalTime iso={order.placedAt} dateOnly />
          <br />
          {humanize(order.paymentMethod)} · {humanize(order.status)}
        </Item>
        <Item label="Customer">
          <bdi>{customer.name}</bdi>
          <br />
          <bdi className="break-all text-slate-700">{customer.email}</bdi>
        </Item>
      </dl>
      <table className="w-full border-collapse text-left">
        <caption className="mb-1 text-left text-xs font-semibold uppercase tracking-wide text-slate-600">
          Items
        </caption>
        <thead>
          <tr className="border-b border-slate-300 text-slate-700">
            <th scope="col" className="py-1 pr-2 font-medium">
              Item
            </th>
            <th scope="col" className="py-1 pr-2 text-right font-medium">
              Qty
            </th>
            <th scope="col" className="py-1 text-right font-medium">
              Price
            </th>
          </tr>
        </thead>
        <tbody>
          {order.items.map((item, i) => (
            // Items have no id; the order of a snapshot's items never changes.
            // biome-ignore lint/suspicious/noArrayIndexKey: see above
            <tr key={i} className="border-b border-slate-200">
              <td className="py-1 pr-2">
                <bdi>{item.name}</bdi>
              </td>
              <td className="py-1 pr-2 text-right tabular-nums">{item.quantity}</td>
              <td className="py-1 text-right tabular-nums">
                {formatMoney(item.unitCents * item.quantity, order.total.currency)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {payload.findings.length > 0 && (
        <div>
          <h4 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-600">
            Policy findings
          </h4>
          <ul className="space-y-1" data-testid="policy-findings">
            {payload.findings.map((f) => (
              <li key={f.code} className="flex items-start gap-2">
                <span
                  className={`mt-0.5 shrink-0 rounded px-1.5 py-0.5 text-xs font-semibold ring-1 ring-inset ${SEVERITY[f.severity] ?? SEVERITY.info}`}
                >
                  {f.severity}
                </span>
                <span>{f.message}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

function Item({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs font-semibold uppercase tracking-wide text-slate-600">{label}</dt>
      <dd className="mt-0.5 text-slate-900">{children}</dd>
    </div>
  );
}
