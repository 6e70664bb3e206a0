import Link from "next/link";
import { type InboxThreadStatus, THREAD_STATUSES } from "@/lib/contract/wire";
import { type InboxParams, inboxSearch, isPendingView } from "./inbox-query";

/** The status filters of the "All threads" view, "all" first. */
const STATUS_TABS = ["all", ...THREAD_STATUSES] as const satisfies readonly InboxThreadStatus[];

/** Short tab labels (the badge in each row says the status in full). */
const STATUS_LABELS: Record<InboxThreadStatus, string> = {
  all: "All",
  running: "Running",
  interrupted: "Waiting",
  completed: "Completed",
  failed: "Failed",
  stopped: "Stopped",
  idle: "Idle",
  needs_attention: "Needs a supervisor",
  closed: "Closed",
};

/** The pending views: everything, what I handle, what nobody handles, what is overdue and escalated. */
const QUEUE_VIEWS: { label: string; assigned?: string; escalated?: string }[] = [
  { label: "All pending" },
  { label: "My queue", assigned: "me" },
  { label: "Unassigned", assigned: "none" },
  { label: "Escalated", escalated: "true" },
];

const chip = (current: boolean) =>
  `rounded-full px-3 py-1 text-xs font-medium ring-1 ring-inset ${
    current
      ? "bg-indigo-700 text-white ring-indigo-700"
      : "bg-white text-slate-700 ring-slate-300 hover:bg-slate-50"
  }`;

function Tab({ href, current, children }: { href: string; current: boolean; children: string }) {
  return (
    <Link
      href={href}
      aria-current={current ? "page" : undefined}
      className={`border-b-2 px-3 py-2 text-sm font-medium ${
        current
          ? "border-indigo-700 text-indigo-800"
          : "border-transparent text-slate-700 hover:text-slate-900"
      }`}
    >
      {children}
    </Link>
  );
}

/** Switch between pending decisions and threads by status (links: each view has its own URL). */
export function InboxTabs({ params }: { params: InboxParams }) {
  const pending = isPendingView(params);
  const keep = { limit: params.limit };
  return (
    <div className="space-y-3">
      <nav aria-label="Inbox views" className="flex gap-2 border-b border-slate-200">
        <Tab href={`/?${inboxSearch(keep)}`} current={pending}>
          Pending decisions
        </Tab>
        <Tab href={`/?${inboxSearch({ ...keep, status: "all" })}`} current={!pending}>
          All threads
        </Tab>
      </nav>
      {pending && (
        <nav aria-label="Queue" className="flex flex-wrap gap-2" data-testid="queue-views">
          {QUEUE_VIEWS.map((view) => {
            const current = params.assigned === view.assigned && params.escalated === view.escalated;
            return (
              <Link
                key={view.label}
                href={`/?${inboxSearch({ ...keep, assigned: view.assigned, escalated: view.escalated })}`}
                aria-current={current ? "page" : undefined}
                className={chip(current)}
              >
                {view.label}
              </Link>
            );
          })}
        </nav>
      )}
      {!pending && (
        <nav aria-label="Thread status" className="flex flex-wrap gap-2">
          {STATUS_TABS.map((s) => (
            <Link
              key={s}
              href={`/?${inboxSearch({ ...keep, status: s })}`}
              aria-current={params.status === s ? "page" : undefined}
              className={chip(params.status === s)}
            >
              {STATUS_LABELS[s]}
            </Link>
          ))}
        </nav>
      )}
    </div>
  );
}
