"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useMemo } from "react";
import { LocalTime } from "@/components/ui/local-time";
import { useHydrated } from "@/components/ui/use-hydrated";
import { operatorMessage } from "@/lib/contract/operator-messages";
import type { OperationsView } from "@/lib/contract/views/operations";
import { type ChartSeries, TimeChart } from "./time-chart";

const COLORS = ["#4f46e5", "#0891b2", "#16a34a", "#d97706", "#dc2626", "#7c3aed", "#475569"];
/** How often the page reloads its numbers (the queue is sampled once a minute by default). */
const REFRESH_MS = 30_000;

/** The supervisors' view of the queue: the numbers now, the last day as charts, and what failed. */
export function OperationsDashboard({ view }: { view: OperationsView }) {
  const router = useRouter();
  const hydrated = useHydrated();
  useEffect(() => {
    const timer = setInterval(() => router.refresh(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [router]);

  const queue = useMemo(() => {
    const times = view.samples.map((s) => s.at);
    const series: ChartSeries[] = [
      { label: "Pending decisions", color: COLORS[0] as string, values: view.samples.map((s) => s.pending) },
      {
        label: "Oldest pending (min)",
        color: COLORS[3] as string,
        values: view.samples.map((s) => Math.round(s.oldestAgeSeconds / 6) / 10),
        axis: "right",
      },
    ];
    const failed: ChartSeries[] = [
      {
        label: "Failed threads",
        color: COLORS[4] as string,
        values: view.samples.map((s) => s.failedThreads),
      },
      {
        label: "Failed effects",
        color: COLORS[5] as string,
        values: view.samples.map((s) => s.failedEffects),
      },
    ];
    return { times, series, failed };
  }, [view.samples]);

  const decisions = useMemo(
    () =>
      Object.entries(view.decisions.outcomes)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([outcome, values], i) => ({
          label: outcome,
          color: COLORS[i % COLORS.length] as string,
          values,
        })),
    [view.decisions.outcomes],
  );
  const decidedToday = decisions.reduce((n, s) => n + s.values.reduce((m, v) => m + (v ?? 0), 0), 0);

  return (
    <div className="space-y-8" data-testid={hydrated ? "operations-ready" : undefined}>
      <section aria-label="Now" className="grid grid-cols-2 gap-4 md:grid-cols-4">
        <Tile
          label="Pending decisions"
          value={String(view.current.pending)}
          testId="ops-pending"
          note={
            view.current.timersWaiting > 0
              ? `and ${view.current.timersWaiting} ${view.current.timersWaiting === 1 ? "timer" : "timers"} running by itself`
              : undefined
          }
        />
        <Tile
          label="Oldest pending"
          value={view.current.pending > 0 ? age(view.current.oldestAgeSeconds) : "none"}
          testId="ops-oldest"
        />
        <Tile
          label="Failed threads"
          value={String(view.current.failedThreads)}
          testId="ops-failed-threads"
          note={
            view.current.stoppedThreads > 0
              ? `and ${view.current.stoppedThreads} stopped on purpose (not failures)`
              : undefined
          }
        />
        <Tile label="Failed effects" value={String(view.current.failedEffects)} testId="ops-failed-effects" />
      </section>

      <Panel
        title="Queue depth and oldest age"
        note={`${view.samples.length} samples in the last 24 hours`}
        empty={view.samples.length === 0 ? "No samples yet: the queue is sampled once a minute." : null}
      >
        <TimeChart
          times={queue.times}
          series={queue.series}
          leftUnit="decisions"
          rightUnit="minutes"
          testId="chart-queue"
        />
      </Panel>

      <Panel
        title="Decisions per hour, by outcome"
        note={`${decidedToday} decisions in the last 24 hours`}
        empty={decisions.length === 0 ? "No decisions in the last 24 hours." : null}
      >
        <TimeChart
          times={view.decisions.hours}
          series={decisions}
          stacked
          leftUnit="decisions"
          testId="chart-decisions"
        />
        <table className="mt-3 w-full text-left text-sm" data-testid="decisions-by-outcome">
          <caption className="sr-only">Decisions in the last 24 hours by outcome</caption>
          <thead>
            <tr className="text-slate-700">
              <th scope="col" className="py-1 font-medium">
                Outcome
              </th>
              <th scope="col" className="py-1 font-medium">
                Last 24 hours
              </th>
            </tr>
          </thead>
          <tbody>
            {decisions.map((s) => (
              <tr key={s.label} className="border-t border-slate-100">
                <td className="py-1">{s.label}</td>
                <td className="py-1 tabular-nums">{s.values.reduce((m, v) => m + (v ?? 0), 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Panel>

      <Panel
        title="Failed threads and effects over time"
        empty={view.samples.length === 0 ? "No samples yet." : null}
      >
        <TimeChart times={queue.times} series={queue.failed} leftUnit="count" testId="chart-failed" />
      </Panel>

      <ReconciliationPanel reconciliation={view.reconciliation} />

      <RetentionPanel retention={view.retention} />

      <div className="grid gap-6 md:grid-cols-2">
        <Panel title="Latest failed runs" empty={view.failedRuns.length === 0 ? "No failed runs." : null}>
          <ul className="divide-y divide-slate-100 text-sm" data-testid="failed-runs">
            {view.failedRuns.map((r) => (
              <li key={r.runId} className="flex flex-wrap items-baseline gap-x-3 py-2">
                <Link className="font-medium text-indigo-800 underline" href={`/threads/${r.threadId}`}>
                  {r.kind} run
                </Link>
                <RunFailure code={r.errorCode} />
                {r.finishedAt && (
                  <span className="text-xs text-slate-600">
                    <LocalTime iso={r.finishedAt} />
                  </span>
                )}
              </li>
            ))}
          </ul>
        </Panel>
        <Panel title="Failed effects" empty={view.failedEffects.length === 0 ? "No failed effects." : null}>
          <ul className="divide-y divide-slate-100 text-sm" data-testid="failed-effects">
            {view.failedEffects.map((e) => (
              <li key={e.effectId} className="flex flex-wrap items-baseline gap-x-3 py-2">
                <Link className="font-medium text-indigo-800 underline" href={`/threads/${e.threadId}`}>
                  {e.kind}
                </Link>
                <span className="text-xs text-slate-700">{e.attempts} attempts</span>
                <span className="text-xs text-slate-600">
                  <LocalTime iso={e.updatedAt} />
                </span>
              </li>
            ))}
          </ul>
        </Panel>
      </div>
    </div>
  );
}

function Tile({
  label,
  value,
  testId,
  note,
}: {
  label: string;
  value: string;
  testId: string;
  note?: string;
}) {
  return (
    <div className="rounded-lg border border-slate-200 bg-white p-4">
      <div className="text-sm text-slate-700">{label}</div>
      <div className="mt-1 text-2xl font-semibold tabular-nums text-slate-900" data-testid={testId}>
        {value}
      </div>
      {note && (
        <div className="mt-1 text-xs text-slate-700" data-testid={`${testId}-note`}>
          {note}
        </div>
      )}
    </div>
  );
}

function Panel({
  title,
  note,
  empty,
  children,
}: {
  title: string;
  note?: string;
  empty?: string | null;
  children: React.ReactNode;
}) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4" aria-label={title}>
      <div className="flex items-baseline justify-between gap-4">
        <h2 className="text-base font-semibold text-slate-900">{title}</h2>
        {note && <span className="text-xs text-slate-700">{note}</span>}
      </div>
      {empty ? (
        <p className="mt-3 text-sm text-slate-700">{empty}</p>
      ) : (
        <div className="mt-3">{children}</div>
      )}
    </section>
  );
}

/** Seconds as the largest sensible unit: "45 s", "12 min", "3.5 h", "2 d". */
/** How long the oldest pending decision has waited (there is one: "none" is said by the caller). */
function age(seconds: number): string {
  if (seconds < 1) return "under 1 s";
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

const REMOVED_WORDS: [key: string, word: string][] = [
  ["checkpoints", "checkpoints"],
  ["writes", "pending writes"],
  ["blobs", "state blobs"],
  ["events", "events"],
  ["threads_archived", "threads archived"],
];

/** The reconciliation with the payment provider: its schedule, its last run and the differences left open. */
function ReconciliationPanel({ reconciliation: r }: { reconciliation: OperationsView["reconciliation"] }) {
  const every = r.everyMs === null ? null : duration(r.everyMs);
  const provider = r.provider === "stripe" ? "Stripe" : "the payment provider";
  return (
    <Panel
      title="Reconciliation with the payment provider"
      note={
        r.provider === null
          ? "Nothing to compare: payments are simulated"
          : every
            ? `${provider}, compared every ${every} (RECONCILE_SCHEDULE), one instance at a time`
            : "Off (RECONCILE_SCHEDULE=off)"
      }
    >
      <dl
        className="grid grid-cols-1 gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]"
        data-testid="reconciliation"
      >
        <dt className="text-slate-700">Last run</dt>
        <dd data-testid="reconciliation-last-run">
          {r.lastFinishedAt
            ? `${new Date(r.lastFinishedAt).toLocaleString()} · ${r.lastOutcome === "ok" ? `${r.lastFound ?? 0} new difference(s)` : "failed"}`
            : "Not run yet"}
        </dd>
        <dt className="text-slate-700">Open differences</dt>
        <dd className="tabular-nums" data-testid="reconciliation-open">
          {r.openFindings}
        </dd>
      </dl>
      <a
        href="/operations/reconciliation"
        className="mt-2 inline-block text-sm text-sky-800 underline underline-offset-2"
      >
        Reconciliation report
      </a>
    </Panel>
  );
}

/** The retention policy's own schedule: on or off, its last run and what that run removed. */
function RetentionPanel({ retention }: { retention: OperationsView["retention"] }) {
  const every = retention.everyMs === null ? null : duration(retention.everyMs);
  const removed = retention.removed
    ? REMOVED_WORDS.map(([key, word]) => `${retention.removed?.[key] ?? 0} ${word}`).join(", ")
    : null;
  return (
    <Panel
      title="Retention"
      note={
        every
          ? `Applied by the server every ${every} (RETENTION_SCHEDULE), one instance at a time`
          : "Off (RETENTION_SCHEDULE=off): only npm run prune and the Admin page apply the policy"
      }
    >
      <dl
        className="grid grid-cols-1 gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]"
        data-testid="retention"
      >
        <dt className="text-slate-700">Last run</dt>
        <dd data-testid="retention-last-run">
          {retention.running
            ? "Running now"
            : retention.lastFinishedAt
              ? `${new Date(retention.lastFinishedAt).toLocaleString()} · ${retention.lastOk ? "done" : `failed (${retention.lastError ?? "error"})`}`
              : "Not run yet"}
        </dd>
        <dt className="text-slate-700">It removed</dt>
        <dd data-testid="retention-removed">{removed ?? "—"}</dd>
        <dt className="text-slate-700">Runs so far</dt>
        <dd className="tabular-nums">{retention.runs}</dd>
      </dl>
    </Panel>
  );
}

function duration(ms: number): string {
  for (const [unit, size] of [
    ["day", 86_400_000],
    ["hour", 3_600_000],
    ["minute", 60_000],
    ["second", 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return ms === size ? unit : `${ms / size} ${unit}s`;
  }
  return `${ms} ms`;
}

/** Why a run failed, in the operator's words, with the code as a details line (never a raw code alone). */
function RunFailure({ code }: { code: string | null }) {
  const message = operatorMessage({ code: code ?? "internal:unknown" });
  return (
    <span className="text-xs text-slate-700" data-testid="run-failure">
      {message.text} <span className="text-slate-600">({message.details})</span>
    </span>
  );
}
