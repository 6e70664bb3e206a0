import "server-only";
import { and, desc, eq, gt, inArray, isNotNull, ne, or, type SQL } from "drizzle-orm";
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
  const previous = await latestResolved({ db, threadId: thread.id });
  const lastApproval = await latestResolved({ db, threadId: thread.id, action: "refund_approval" });
  const sincePrevious: SQL[] = [ne(runs.kind, "resume")];
  if (previous) sincePrevious.push(gt(runs.createdAt, previous));
  const starters = await db
    .select({ id: runs.startedBy, kind: runs.kind, edited: runs.editedState })
    .from(runs)
    .where(
      and(
        eq(runs.threadId, thread.id),
        isNotNull(runs.startedBy),
        or(eq(runs.editedState, true), and(...sincePrevious)),
      ),
    );
  const answerWhere: SQL[] = [
    eq(decisions.threadId, thread.id),
    inArray(decisions.action, INPUT_ACTIONS),
    eq(decisions.status, "resolved"),
    isNotNull(decisions.resolvedById),
  ];
  if (lastApproval) answerWhere.push(gt(decisions.resolvedAt, lastApproval));
  const answerers = await db
    .select({ id: decisions.resolvedById })
    .from(decisions)
    .where(and(...answerWhere));

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

/** When the thread's latest resolved decision (of `action`, if given) was taken, or null. */
async function latestResolved({
  db,
  threadId,
  action,
}: {
  db: Queryable;
  threadId: string;
  action?: string;
}): Promise<Date | null> {
  const where = [
    eq(decisions.threadId, threadId),
    eq(decisions.status, "resolved"),
    isNotNull(decisions.resolvedAt),
  ];
  if (action) where.push(eq(decisions.action, action));
  const [row] = await db
    .select({ at: decisions.resolvedAt })
    .from(decisions)
    .where(and(...where))
    .orderBy(desc(decisions.resolvedAt))
    .limit(1);
  return row?.at ?? null;
}
