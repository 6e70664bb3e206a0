import Link from "next/link";
import { threadHref } from "@/components/inbox/inbox-query";
import { LiveStatusBadge } from "@/components/ui/status-badge";
import type { QueueNeighbour } from "@/lib/contract/inbox";

/** Title, status and current step, the way back to the inbox and on to the history, and who is operating. */
export function ThreadHeader({
  threadId,
  title,
  status,
  step,
  signedInAs,
  canDecide,
  queue = { previous: null, next: null },
  filedWith = [],
}: {
  threadId: string;
  title: string;
  status: string;
  step?: string;
  /** Decisions taken on this page are recorded under this user. */
  signedInAs: string | null;
  /** Whether that user may decide here at all (a viewer may not). */
  canDecide: boolean;
  /**
   * The threads before and after this one in the queue of pending decisions: `p` and `n` go there. `search`: the inbox
   * view they were found in (its query string, kept on these links and on the way back), "" for the whole queue.
   */
  queue?: { previous: QueueNeighbour | null; next: QueueNeighbour | null; search?: string };
  /** The ticket's own fields (its agent's intake, besides the message and the order), as filed. */
  filedWith?: { name: string; label: string; value: string }[];
}) {
  const link =
    "rounded text-sm font-medium text-indigo-800 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-indigo-600";
  return (
    <header className="space-y-3">
      <nav aria-label="Thread" className="flex flex-wrap items-center justify-between gap-3">
        <Link href={`/${queue.search ?? ""}`} className={link} data-testid="back-to-inbox">
          ← Back to the inbox
        </Link>
        <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
          {queue.previous && (
            <QueueLink to={queue.previous} which="previous" search={queue.search ?? ""} className={link} />
          )}
          {queue.next && (
            <QueueLink to={queue.next} which="next" search={queue.search ?? ""} className={link} />
          )}
          <Link
            href={`/threads/${encodeURIComponent(threadId)}/history`}
            className={link}
            data-testid="history-link"
          >
            Checkpoint history
          </Link>
        </div>
      </nav>
      <div className="flex flex-wrap items-start justify-between gap-4">
        <div className="min-w-0 space-y-1">
          <h1 className="break-words text-2xl font-semibold text-slate-900" data-testid="thread-title">
            <bdi>{title}</bdi>
          </h1>
          <LiveStatusBadge status={status} step={step} />
          {filedWith.length > 0 && (
            <dl className="flex flex-wrap gap-x-4 gap-y-1 text-sm text-slate-700" data-testid="ticket-fields">
              {filedWith.map((f) => (
                <div key={f.name} className="flex gap-1" data-testid={`ticket-field-${f.name}`}>
                  <dt>{f.label}:</dt>
                  <dd className="font-medium text-slate-900">
                    <bdi>{f.value}</bdi>
                  </dd>
                </div>
              ))}
            </dl>
          )}
        </div>
        {signedInAs && (
          <p className="min-w-0 break-all text-sm text-slate-700" data-testid="deciding-as">
            {canDecide ? "Deciding as" : "Reading as"}{" "}
            <bdi className="font-medium text-slate-900">{signedInAs}</bdi>
          </p>
        )}
      </div>
    </header>
  );
}

/**
 * A link to the queue's next or previous thread; `n` / `p` follow it (components/thread/use-decision-keys.ts). In an
 * inbox view (`search`), the view's next or previous, and the link stays in that view.
 */
function QueueLink({
  to,
  which,
  search,
  className,
}: {
  to: QueueNeighbour;
  which: "next" | "previous";
  search: string;
  className: string;
}) {
  const key = which === "next" ? "n" : "p";
  const where = search ? "view" : "queue";
  return (
    <Link
      href={threadHref(to.threadId, search)}
      className={className}
      data-testid={`queue-${which}`}
      data-queue-view={search ? "filtered" : "all"}
      data-shortcut-page={key}
      aria-keyshortcuts={key}
      title={`${which === "next" ? "Next" : "Previous"} in the ${search ? "inbox view" : "queue"}: ${to.title}`}
    >
      {which === "next" ? `Next in ${where} ›` : `‹ Previous in ${where}`}
    </Link>
  );
}
