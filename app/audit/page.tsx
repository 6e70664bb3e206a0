import type { Metadata } from "next";
import Link from "next/link";
import { summarizeAnswer } from "@/components/thread/answer-summary";
import { controlClass, FieldLabel } from "@/components/ui/field";
import { LocalTime } from "@/components/ui/local-time";
import { answeringPage, requirePageUser } from "@/lib/auth/page";
import { principalOfUser, teamScope } from "@/lib/auth/teams";
import { AUDIT_ACTIONS, type AuditAction } from "@/lib/contract/audit";
import { showControls } from "@/lib/contract/bidi";
import { getDatabase } from "@/lib/db/client";
import { readAuditTrail } from "@/lib/runtime/views/audit-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit trail" };

const PAGE_SIZE = 50;

function one(value: string | string[] | undefined): string | undefined {
  // Control characters (a NUL above all) cannot be stored or searched for: drop them from filters.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const v = typeof value === "string" ? value.replace(/[\u0000-\u001f\u007f]/g, "").trim() : undefined;
  return v ? v.slice(0, 200) : undefined;
}

/** The decision's action, from what the operator was shown (the interrupt payload). */
function actionOf(payload: unknown): string {
  const action = (payload as { action?: unknown } | null)?.action;
  return typeof action === "string" ? action : "";
}

/** Text of a JSON value for a <pre>: React escapes it, so payload text is never markup. */
function jsonText(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value, null, 2);
}

/**
 * Who did what and when: decisions (with what the operator was shown and answered), forks, prunes, sign-ins, user
 * and key changes. Newest first, filterable; there is nothing here (or anywhere) that edits or deletes an entry.
 */
async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requirePageUser("/audit");
  const search = await searchParams;
  const actionParam = one(search.action);
  const action = AUDIT_ACTIONS.includes(actionParam as AuditAction)
    ? (actionParam as AuditAction)
    : undefined;
  const actor = one(search.actor);
  const threadId = one(search.thread);
  const beforeRaw = Number(one(search.before));
  const before = Number.isSafeInteger(beforeRaw) && beforeRaw > 0 ? beforeRaw : undefined;
  const { db } = await getDatabase();
  const { hiddenAgents } = await teamScope(db, principalOfUser(user));
  const page = await readAuditTrail({
    db,
    filter: { action, actor, threadId, before, limit: PAGE_SIZE },
    hiddenAgents,
  });
  const older = new URLSearchParams({
    ...(action ? { action } : {}),
    ...(actor ? { actor } : {}),
    ...(threadId ? { thread: threadId } : {}),
    ...(page.nextBefore ? { before: String(page.nextBefore) } : {}),
  });

  return (
    <div className="space-y-5" data-testid="audit-page">
      <div>
        <h1 className="text-2xl font-semibold">Audit trail</h1>
        <p className="mt-1 text-sm text-slate-700">
          Every decision, fork, prune and sign-in, newest first. Entries are never changed or removed.
        </p>
      </div>
      <form method="get" className="flex flex-wrap items-end gap-4" aria-label="Filter the audit trail">
        <div>
          <FieldLabel htmlFor="audit-action">What</FieldLabel>
          <select id="audit-action" name="action" defaultValue={action ?? ""} className={controlClass}>
            <option value="">Everything</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a.replace("_", " ")}
              </option>
            ))}
          </select>
        </div>
        <div>
          <FieldLabel htmlFor="audit-actor">Who</FieldLabel>
          <input
            id="audit-actor"
            name="actor"
            defaultValue={actor ?? ""}
            placeholder="email or key name"
            className={controlClass}
          />
        </div>
        <div>
          <FieldLabel htmlFor="audit-thread">Thread id</FieldLabel>
          <input id="audit-thread" name="thread" defaultValue={threadId ?? ""} className={controlClass} />
        </div>
        <button
          type="submit"
          className="rounded-md bg-indigo-700 px-3 py-2 text-sm font-semibold text-white hover:bg-indigo-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
        >
          Filter
        </button>
        {(action || actor || threadId) && (
          <Link
            href="/audit"
            className="py-2 text-sm font-medium text-indigo-800 underline underline-offset-2"
          >
            Clear filters
          </Link>
        )}
      </form>
      {page.items.length === 0 ? (
        <p className="rounded-lg border border-slate-200 bg-white p-5 text-sm text-slate-800">
          Nothing recorded{action || actor || threadId ? " matches these filters" : " yet"}.
        </p>
      ) : (
        <ol className="min-w-0 space-y-3" data-testid="audit-entries">
          {page.items.map((entry) => {
            const payload = jsonText(entry.payload);
            const answer = jsonText(entry.answer);
            const detail = jsonText(entry.detail);
            return (
              <li
                key={entry.id}
                className="min-w-0 rounded-lg border border-slate-200 bg-white p-4 text-sm"
                data-testid="audit-entry"
                data-action={entry.action}
              >
                <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
                  <span className="font-semibold text-slate-900">{entry.action.replace("_", " ")}</span>
                  <span data-testid="audit-actor" className="min-w-0 break-all">
                    by <bdi className="font-medium">{showControls(actorName(entry.actor))}</bdi>
                    {entry.actorRole ? ` (${entry.actorRole})` : ""}
                  </span>
                  <span className="text-slate-700">
                    <LocalTime iso={entry.at.toISOString()} />
                  </span>
                  {entry.threadId && (
                    <Link
                      href={`/threads/${encodeURIComponent(entry.threadId)}`}
                      className="font-mono text-indigo-800 underline underline-offset-2"
                    >
                      thread {entry.threadId.slice(0, 8)}
                    </Link>
                  )}
                  {entry.checkpointId && (
                    <span className="font-mono text-slate-700">
                      checkpoint {entry.checkpointId.slice(0, 13)}
                    </span>
                  )}
                </div>
                {(payload || answer || detail) && (
                  <div className="mt-3 grid gap-3 md:grid-cols-2 [&>*]:min-w-0">
                    {payload && (
                      <details>
                        <summary className="cursor-pointer font-medium text-slate-900">
                          Shown to the operator
                        </summary>
                        <pre
                          data-raw
                          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling record must be reachable by keyboard (axe scrollable-region-focusable)
                          tabIndex={0}
                          className="mt-1 max-h-64 overflow-auto rounded bg-slate-50 p-2 text-xs"
                        >
                          {payload}
                        </pre>
                      </details>
                    )}
                    {answer && (
                      <div>
                        <p className="font-medium text-slate-900">Answer</p>
                        <p className="mt-1 text-slate-800" data-testid="audit-answer-summary">
                          <bdi>{summarizeAnswer(actionOf(entry.payload), entry.answer)}</bdi>
                        </p>
                        <details className="mt-1">
                          <summary className="cursor-pointer text-xs text-slate-700">As recorded</summary>
                          <pre
                            data-raw
                            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling record must be reachable by keyboard (axe scrollable-region-focusable)
                            tabIndex={0}
                            className="mt-1 max-h-64 overflow-auto rounded bg-slate-50 p-2 text-xs"
                            data-testid="audit-answer"
                          >
                            {answer}
                          </pre>
                        </details>
                      </div>
                    )}
                    {detail && (
                      <details>
                        <summary className="cursor-pointer font-medium text-slate-900">Details</summary>
                        <pre
                          data-raw
                          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling record must be reachable by keyboard (axe scrollable-region-focusable)
                          tabIndex={0}
                          className="mt-1 max-h-64 overflow-auto rounded bg-slate-50 p-2 text-xs"
                        >
                          {detail}
                        </pre>
                      </details>
                    )}
                  </div>
                )}
              </li>
            );
          })}
        </ol>
      )}
      {page.nextBefore && (
        <Link
          href={`/audit?${older.toString()}`}
          className="inline-block rounded-md bg-white px-3 py-2 text-sm font-semibold text-slate-900 shadow-sm ring-1 ring-inset ring-slate-300 hover:bg-slate-50"
        >
          Older entries
        </Link>
      )}
    </div>
  );
}

/** The runtime's own actors (`system:expiry`, `system:deadlines`, …) in words; people and keys as recorded. */
function actorName(actor: string): string {
  const system = /^system:(.+)$/.exec(actor);
  if (!system) return actor;
  return `the system (${system[1]!.replace(/[_-]+/g, " ")})`;
}

export default answeringPage(AuditPage);
