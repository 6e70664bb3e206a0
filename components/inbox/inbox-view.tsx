"use client";

import { useHydrated } from "@/components/ui/use-hydrated";
import { useNow } from "@/components/ui/use-now";
import type { InboxDecisionItem, InboxThreadItem } from "@/lib/db/queries/inbox";
import { DecisionTable } from "./decision-table";
import { InboxEmpty } from "./inbox-empty";
import { InboxFilters } from "./inbox-filters";
import { hasFilters, type InboxParams, inboxSearch, isPendingView } from "./inbox-query";
import { InboxTabs } from "./inbox-tabs";
import { Pager } from "./pager";
import { ThreadTable } from "./thread-table";
import { type InboxPageData, POLL_MS, useLiveInbox } from "./use-live-inbox";

/**
 * The operator's inbox: pending decisions across threads, oldest first (or threads by status), live. The first page
 * comes rendered from the server; then the list polls the API and updates in place.
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
  const live = useLiveInbox(params, initial, renderedAt);
  const pending = isPendingView(params);
  const items = live.page.items;
  const elapsed = Math.max(0, now - live.fetchedAt);

  return (
    <div data-testid="inbox" data-ready={hydrated ? "true" : "false"} className="space-y-5">
      <div className="flex flex-wrap items-baseline justify-between gap-3">
        <h1 className="text-2xl font-semibold">Inbox</h1>
        <p className="flex items-center gap-2 text-xs text-slate-600" data-testid="live-status">
          <span
            aria-hidden="true"
            className={`inline-block size-2 rounded-full ${live.error ? "bg-amber-500" : "bg-emerald-500"}`}
          />
          {live.error ? "Reconnecting…" : `Live: refreshes every ${POLL_MS / 1000} s`}
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
      {live.error && (
        <p className="rounded-md bg-amber-50 p-3 text-sm text-amber-900">
          Could not refresh the inbox ({live.error}). Showing the last known list; retrying.
        </p>
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
            items={items as InboxDecisionItem[]}
            fresh={live.fresh}
            ageOf={(item) => item.decision.ageSeconds * 1000 + elapsed}
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
