"use client";

import { useRouter } from "next/navigation";
import { useMemo, useState } from "react";
import { useUser } from "@/components/auth/user-context";
import { useHydrated } from "@/components/ui/use-hydrated";
import { useNow } from "@/components/ui/use-now";
import type { InboxDecisionItem, InboxThreadItem } from "@/lib/contract/inbox";
import { isBulkAction } from "@/lib/contract/questions/bulk";
import type { BulkVerb } from "@/lib/contract/questions/kinds";
import { hasRole } from "@/lib/contract/roles";
import { BulkBar } from "./bulk-bar";
import { DecisionTable } from "./decision-table";
import { InboxEmpty } from "./inbox-empty";
import { InboxFilters } from "./inbox-filters";
import {
  hasFilters,
  type InboxParams,
  inboxSearch,
  isPendingView,
  queueSearch,
  threadHref,
} from "./inbox-query";
import { InboxTabs } from "./inbox-tabs";
import { Pager } from "./pager";
import { ThreadTable } from "./thread-table";
import { type InboxPageData, POLL_MS, useLiveInbox } from "./use-live-inbox";
import { useTriageKeys } from "./use-triage-keys";

const LIVE_TEXT = {
  stream: "Live",
  connecting: "Connecting to live updates…",
  polling: `Live updates are down: refreshing every ${POLL_MS / 1000} s`,
} as const;

/**
 * The operator's queue: pending decisions across threads, soonest due first (or threads by status), live from the
 * server's change stream. Claims say who handles what; rows can be selected for bulk decisions; j/k/x/a/r triage
 * from the keyboard.
 */
export function InboxView({
  params,
  initial,
  renderedAt,
  problem,
}: {
  params: InboxParams;
  initial: InboxPageData;
  renderedAt: number;
  /** Why the URL's filters were ignored. */
  problem?: string;
}) {
  const hydrated = useHydrated();
  const now = useNow(renderedAt);
  const user = useUser();
  const router = useRouter();
  const live = useLiveInbox(params, initial, renderedAt);
  const pending = isPendingView(params);
  const items = live.page.items;
  const elapsed = Math.max(0, now - live.fetchedAt);
  const decisions = pending ? (items as InboxDecisionItem[]) : [];
  const canDecide = hasRole(user?.role, "operator");

  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [active, setActive] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<BulkVerb | null>(null);
  // Only rows still listed stay selected (a decided row leaves the selection with the list).
  const listed = useMemo(() => new Map(decisions.map((d) => [d.decision.interruptId, d])), [decisions]);
  const selected = [...picked].filter((id) => listed.has(id));
  const activeId = active && listed.has(active) ? active : null;
  const toggle = (id: string) =>
    setPicked((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const kinds = new Set(selected.map((id) => listed.get(id)?.decision.action));
  const bulkProblem =
    kinds.size > 1
      ? "Select items of one kind to decide them together."
      : [...kinds].some((k) => k && !isBulkAction(k))
        ? "These items are decided one by one."
        : null;

  useTriageKeys({
    enabled: hydrated && pending && canDecide && confirming === null,
    move: (delta) => {
      const ids = decisions.map((d) => d.decision.interruptId);
      if (ids.length === 0) return;
      const at = activeId ? ids.indexOf(activeId) : -1;
      const next = ids[Math.min(ids.length - 1, Math.max(0, at + delta))] ?? null;
      setActive(next);
      if (next)
        document
          .querySelector(`[data-interrupt-id="${CSS.escape(next)}"]`)
          ?.scrollIntoView({ block: "nearest" });
    },
    toggle: () => activeId && toggle(activeId),
    decide: (verb) => {
      if (selected.length === 0 && activeId) setPicked(new Set([activeId]));
      if (selected.length > 0 || activeId) setConfirming(verb);
    },
    open: () => {
      const item = activeId && listed.get(activeId);
      if (item) router.push(threadHref(item.thread.threadId, queueSearch(params)));
    },
  });

  return (
    <div data-testid="inbox" data-ready={hydrated ? "true" : "false"} className="space-y-5">
      <div className="flex flex-wrap items-baseline justify-between gap-3">
        <h1 className="text-2xl font-semibold">
          Inbox
          {pending && typeof live.page.total === "number" && (
            <span className="ml-2 text-base font-normal text-slate-700" data-testid="inbox-total">
              {live.page.total === 1 ? "1 decision waiting" : `${live.page.total} decisions waiting`}
            </span>
          )}
        </h1>
        <p
          className="flex items-center gap-2 text-xs text-slate-600"
          data-testid="live-status"
          data-mode={live.mode}
        >
          <span
            aria-hidden="true"
            className={`inline-block size-2 rounded-full ${
              live.error || live.mode === "polling"
                ? "bg-amber-500"
                : live.mode === "stream"
                  ? "bg-emerald-500"
                  : "bg-slate-400"
            }`}
          />
          {live.error ? "Reconnecting…" : LIVE_TEXT[live.mode]}
        </p>
      </div>
      <InboxTabs params={params} />
      {problem && (
        <p role="alert" className="rounded-md bg-red-50 p-3 text-sm text-red-800">
          These filters were ignored: {problem}
        </p>
      )}
      {pending && <InboxFilters params={params} />}
      <div aria-live="polite" className="sr-only" data-testid="inbox-announcement">
        {live.announcement}
      </div>
      {live.error &&
        (live.down ? (
          <p
            role="status"
            className="rounded-md bg-amber-50 p-3 text-sm text-amber-900"
            data-testid="server-down"
          >
            Lost the connection to the server. Retrying every few seconds… The list below is the last one
            received.
          </p>
        ) : (
          <p className="rounded-md bg-amber-50 p-3 text-sm text-amber-900">
            Could not refresh the inbox ({live.error}). Showing the last known list; retrying.
          </p>
        ))}
      {pending && canDecide && (
        <>
          <p className="text-xs text-slate-600 max-sm:hidden">
            Keyboard: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>x</kbd> select, <kbd>a</kbd> approve, <kbd>r</kbd>{" "}
            reject, <kbd>Enter</kbd> open.
          </p>
          <BulkBar
            selected={selected}
            titleOf={(id) => {
              const item = listed.get(id);
              return item ? (item.decision.title ?? item.thread.title) : id;
            }}
            findingsOf={(id) => listed.get(id)?.decision.findings ?? null}
            problem={bulkProblem}
            confirming={confirming}
            setConfirming={setConfirming}
            onDone={() => {
              setPicked(new Set());
              live.refresh();
            }}
          />
        </>
      )}
      <section
        aria-label={pending ? "Pending decisions" : "Threads"}
        aria-busy={live.loading}
        className={live.loading ? "opacity-60" : undefined}
      >
        {items.length === 0 ? (
          <InboxEmpty
            kind={!pending ? "threads" : hasFilters(params) ? "filtered" : "decisions"}
            clearHref={`/?${inboxSearch({ limit: params.limit })}`}
          />
        ) : pending ? (
          <DecisionTable
            items={decisions}
            fresh={live.fresh}
            ageOf={(item) => item.decision.ageSeconds * 1000 + elapsed}
            leftOf={(item) => item.decision.secondsLeft * 1000 - elapsed}
            selection={canDecide ? { selected: new Set(selected), toggle } : undefined}
            active={activeId}
            onChange={live.refresh}
            queue={queueSearch(params)}
          />
        ) : (
          <ThreadTable items={items as InboxThreadItem[]} fresh={live.fresh} now={now} />
        )}
      </section>
      <Pager
        pageNumber={live.pageNumber}
        hasNext={live.page.nextCursor !== null}
        loading={live.loading}
        onBack={live.back}
        onNext={live.next}
      />
    </div>
  );
}
