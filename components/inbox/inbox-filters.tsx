"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState, useTransition } from "react";
import { ACTION_LABELS } from "@/components/ui/action-label";
import { Button } from "@/components/ui/button";
import { controlClass } from "@/components/ui/field";
import { INTERRUPT_ACTIONS } from "@/lib/contract/questions/contract";
import {
  AGE_CHOICES,
  centsToEuros,
  DEFAULT_PAGE_SIZE,
  eurosToCents,
  type InboxParams,
  inboxSearch,
  PAGE_SIZES,
} from "./inbox-query";

const field = `mt-1 ${controlClass}`;
const label = "block text-xs font-semibold text-slate-700";

/**
 * Filters of the pending decisions. Applying them navigates to the inbox URL that carries them (a bookmark or a
 * colleague's link shows the same list); the server renders the first page and live polling takes over.
 */
export function InboxFilters({ params }: { params: InboxParams }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [action, setAction] = useState(params.action ?? "");
  const [minEuros, setMinEuros] = useState(centsToEuros(params.minAmount));
  const [maxEuros, setMaxEuros] = useState(centsToEuros(params.maxAmount));
  const [olderThan, setOlderThan] = useState(params.olderThan ?? "");
  const [limit, setLimit] = useState(params.limit ?? DEFAULT_PAGE_SIZE);
  const [problem, setProblem] = useState<string | null>(null);
  const sizes = PAGE_SIZES.includes(limit as (typeof PAGE_SIZES)[number])
    ? PAGE_SIZES
    : [...PAGE_SIZES, limit];

  const navigate = (next: InboxParams) => startTransition(() => router.push(`/?${inboxSearch(next)}`));

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const minAmount = eurosToCents(minEuros);
    const maxAmount = eurosToCents(maxEuros);
    if (minAmount === null || maxAmount === null) {
      return setProblem("Amounts are in euros, e.g. 50 or 249.90.");
    }
    if (minAmount !== undefined && maxAmount !== undefined && Number(minAmount) > Number(maxAmount)) {
      return setProblem("The minimum amount is above the maximum.");
    }
    setProblem(null);
    navigate({
      action: action || undefined,
      minAmount,
      maxAmount,
      olderThan: olderThan || undefined,
      assigned: params.assigned,
      escalated: params.escalated,
      limit,
    });
  };

  return (
    <form
      aria-label="Filter pending decisions"
      onSubmit={apply}
      data-testid="inbox-filters"
      className="grid grid-cols-2 items-end gap-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm md:grid-cols-6"
    >
      <div className="col-span-2 md:col-span-1">
        <label htmlFor="filter-action" className={label}>
          Action
        </label>
        <select
          id="filter-action"
          className={field}
          value={action}
          onChange={(e) => setAction(e.target.value)}
        >
          <option value="">All actions</option>
          {[...INTERRUPT_ACTIONS, "unknown" as const].map((a) => (
            <option key={a} value={a}>
              {ACTION_LABELS[a]}
            </option>
          ))}
        </select>
      </div>
      <AmountField
        id="filter-min"
        label="Min amount (€)"
        value={minEuros}
        onChange={setMinEuros}
        problem={problem}
      />
      <AmountField
        id="filter-max"
        label="Max amount (€)"
        value={maxEuros}
        onChange={setMaxEuros}
        problem={problem}
      />
      <div>
        <label htmlFor="filter-age" className={label}>
          Age
        </label>
        <select
          id="filter-age"
          className={field}
          value={olderThan}
          onChange={(e) => setOlderThan(e.target.value)}
        >
          <option value="">Any age</option>
          {AGE_CHOICES.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor="filter-limit" className={label}>
          Per page
        </label>
        <select id="filter-limit" className={field} value={limit} onChange={(e) => setLimit(e.target.value)}>
          {sizes.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <div className="flex gap-2">
        <Button type="submit" disabled={pending} data-testid="apply-filters">
          Apply
        </Button>
        <Button
          variant="secondary"
          disabled={pending}
          onClick={() => navigate({ limit: params.limit })}
          data-testid="clear-filters"
        >
          Clear
        </Button>
      </div>
      {problem && (
        <p id="filter-problem" role="alert" className="col-span-full text-sm text-red-700">
          {problem}
        </p>
      )}
    </form>
  );
}

/** A euro amount input of the filters, pointing at the filters' problem message while there is one. */
function AmountField(props: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  problem: string | null;
}) {
  return (
    <div>
      <label htmlFor={props.id} className={label}>
        {props.label}
      </label>
      <input
        id={props.id}
        inputMode="decimal"
        className={field}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        aria-invalid={props.problem ? true : undefined}
        aria-describedby={props.problem ? "filter-problem" : undefined}
      />
    </div>
  );
}
