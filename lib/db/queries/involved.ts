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
  thread: Pick<Thread, "id" | "createdBy" | "startedBy" | "lastEditedBy">;
}): Promise<InvolvedPrincipal[]> {
  // One statement: the time of the thread's previous decision and of its last approval, the runs started since the
  // previous decision (and every run that edited state), the free-text answers since the last approval.
  const rows = rowsOf<{
    source: "run" | "answer" | "previous";
    id: string | null;
    kind: string | null;
    edited: boolean | null;
  }>(
    await db.execute(sql`WITH previous AS (
      SELECT max(resolved_at) AS at FROM ${decisions}
      WHERE thread_id = ${thread.id} AND status = 'resolved' AND resolved_at IS NOT NULL
    ), approval AS (
      SELECT max(resolved_at) AS at FROM ${decisions}
      WHERE thread_id = ${thread.id} AND status = 'resolved' AND resolved_at IS NOT NULL AND action = ${APPROVAL_ACTION}
    )
    SELECT 'run' AS source, r.started_by AS id, r.kind, r.edited_state AS edited
    FROM ${runs} r
    WHERE r.thread_id = ${thread.id} AND r.started_by IS NOT NULL
      AND (r.edited_state OR (r.kind <> 'resume'
        AND ((SELECT at FROM previous) IS NULL OR r.created_at > (SELECT at FROM previous))))
    UNION ALL
    SELECT 'answer', d.resolved_by_id, NULL, NULL
    FROM ${decisions} d
    WHERE d.thread_id = ${thread.id} AND d.action = ANY(${sql.param(INPUT_ACTIONS)}::text[])
      AND d.status = 'resolved' AND d.resolved_by_id IS NOT NULL
      AND ((SELECT at FROM approval) IS NULL OR d.resolved_at > (SELECT at FROM approval))
    UNION ALL
    SELECT 'previous', NULL, NULL, NULL WHERE (SELECT at FROM previous) IS NOT NULL`),
  );
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
