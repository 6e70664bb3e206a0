import "server-only";
import { sql } from "drizzle-orm";
import { rowsOf } from "../rows";
import { decisions, runs, type Thread } from "../schema";
import type { Queryable } from "../tx";

/** Someone who supplied input that led to a thread's pending request, and how (for the refusal message). */
export interface InvolvedPrincipal {
  id: string;
  /** An editor changed the branch's state; the others supplied input through the normal flow. */
  kind: "filer" | "starter" | "answerer" | "editor";
  why: string;
}

/** Decisions whose answer is free input (it can name another order or amount), not a choice among offered ones. */
const INPUT_ACTIONS = ["input_text"];

/** The decision that acts: free-text answers before the last one of these no longer count. */
const APPROVAL_ACTION = "refund_approval";

/**
 * Everyone who supplied input that led to what a thread asks now — four-eyes bars them from approving it:
 * who filed the ticket; who started a run (new message, retry, fork) since the thread's previous decision; who answered
 * a free-text question (e.g. the order number) since the last approval; and whoever edited the thread's state by a
 * fork, ever. Resume runs are not input: their answers are decisions, vetted by the ledger.
 */
export async function listInvolvedPrincipals({
  db,
  thread,
}: {
  db: Queryable;
  thread: InvolvedThread;
}): Promise<InvolvedPrincipal[]> {
  return (await listInvolvedPrincipalsOf({ db, threads: [thread] })).get(thread.id) ?? [];
}

export type InvolvedThread = Pick<Thread, "id" | "createdBy" | "startedBy" | "lastEditedBy">;

/**
 * {@link listInvolvedPrincipals} for several threads (an operator's inbox page) in one statement: thread id → who was
 * involved.
 */
export async function listInvolvedPrincipalsOf({
  db,
  threads,
}: {
  db: Queryable;
  threads: readonly InvolvedThread[];
}): Promise<Map<string, InvolvedPrincipal[]>> {
  const out = new Map<string, InvolvedPrincipal[]>();
  if (threads.length === 0) return out;
  const ids = [...new Set(threads.map((t) => t.id))];
  const rows = rowsOf<InvolvedRow & { thread_id: string }>(
    await db.execute(sql`SELECT source, thread_id, id, kind, edited FROM (${involvedUnion(ids)}) involved
    ORDER BY at NULLS FIRST, source, id, kind, edited`),
  );
  const byThread = new Map<string, typeof rows>();
  for (const row of rows) {
    const list = byThread.get(row.thread_id);
    if (list) list.push(row);
    else byThread.set(row.thread_id, [row]);
  }
  for (const thread of threads) out.set(thread.id, involvedOf(thread, byThread.get(thread.id) ?? []));
  return out;
}

/** One row of what {@link involvedUnion} finds (see {@link involvedOf}). */
export interface InvolvedRow {
  source: "run" | "answer" | "previous";
  id: string | null;
  kind: string | null;
  edited: boolean | null;
}

/**
 * What the principals involved in these threads are made of, unordered: per thread, the time of its previous decision
 * and of its last approval; the runs started since the previous decision (and every run that edited state), with the
 * time they were started (`at`); the free-text answers since the last approval; and a row saying the thread had a
 * previous decision. Columns: source, thread_id, id, kind, edited, at.
 */
function involvedUnion(ids: readonly string[]) {
  return sql`WITH marks AS (
      SELECT thread_id, max(resolved_at) AS previous,
        max(resolved_at) FILTER (WHERE action = ${APPROVAL_ACTION}) AS approval
      FROM ${decisions}
      WHERE thread_id = ANY(${sql.param(ids)}::text[]) AND status = 'resolved' AND resolved_at IS NOT NULL
      GROUP BY thread_id
    )
    SELECT 'run' AS source, r.thread_id, r.started_by AS id, r.kind, r.edited_state AS edited, r.created_at AS at
    FROM ${runs} r LEFT JOIN marks m ON m.thread_id = r.thread_id
    WHERE r.thread_id = ANY(${sql.param(ids)}::text[]) AND r.started_by IS NOT NULL
      AND (r.edited_state OR (r.kind <> 'resume' AND (m.previous IS NULL OR r.created_at > m.previous)))
    UNION ALL
    SELECT 'answer', d.thread_id, d.resolved_by_id, NULL, NULL, d.resolved_at
    FROM ${decisions} d LEFT JOIN marks m ON m.thread_id = d.thread_id
    WHERE d.thread_id = ANY(${sql.param(ids)}::text[]) AND d.action = ANY(${sql.param(INPUT_ACTIONS)}::text[])
      AND d.status = 'resolved' AND d.resolved_by_id IS NOT NULL
      AND (m.approval IS NULL OR d.resolved_at > m.approval)
    UNION ALL
    SELECT 'previous', thread_id, NULL, NULL, NULL, NULL FROM marks`;
}

/**
 * A scalar subquery: the rows {@link involvedOf} needs for one thread, as a JSON array in their order — to be read in
 * the same statement as something else (a claim's open decisions).
 */
export function involvedRowsJson(threadId: string) {
  return sql<
    InvolvedRow[]
  >`(SELECT coalesce(json_agg(json_build_object('source', source, 'id', id, 'kind', kind,
    'edited', edited) ORDER BY at NULLS FIRST, source, id, kind, edited), '[]'::json)
    FROM (${involvedUnion([threadId])}) involved)`;
}

/** The principals involved in a thread, from its rows (see {@link involvedRowsJson}). */
export function involvedOf(thread: InvolvedThread, rows: readonly InvolvedRow[]): InvolvedPrincipal[] {
  const previous = rows.some((r) => r.source === "previous");
  const starters = rows
    .filter((r) => r.source === "run")
    .map((r) => ({ id: r.id, kind: r.kind, edited: r.edited === true }));
  const answerers = rows.filter((r) => r.source === "answer").map((r) => ({ id: r.id }));

  const involved: InvolvedPrincipal[] = [];
  const add = (id: string | null | undefined, kind: InvolvedPrincipal["kind"], why: string) => {
    if (id && !involved.some((p) => p.id === id)) involved.push({ id, kind, why });
  };
  // Editors first: an editor who also filed the ticket is refused as an editor (the stricter rule).
  add(thread.lastEditedBy, "editor", "edited this thread's state");
  for (const run of starters) {
    if (run.edited) add(run.id, "editor", "edited this thread's state");
  }
  add(thread.createdBy, "filer", "filed this ticket");
  for (const run of starters) {
    const why = run.kind === "input" ? "sent input to this thread" : "started a run on this thread";
    if (!run.edited) add(run.id, "starter", why);
  }
  for (const answer of answerers) add(answer.id, "answerer", "answered a question that led to this request");
  // Threads from before runs recorded their starter: the first run's starter, as recorded on the thread.
  if (!previous) add(thread.startedBy, "starter", "started this thread");
  return involved;
}
