import "server-only";
import { and, eq, inArray, notInArray, sql } from "drizzle-orm";
import type { ResumeStatus } from "@/lib/contract/wire";
import { type Decision, decisions } from "../schema";
import type { Queryable } from "../tx";
import {
  type KeySource,
  openThreadJson,
  openThreadText,
  primeThreadKeys,
  type RowSealer,
  rowSealer,
} from "../vault";
import { type InvolvedPrincipal, type InvolvedThread, involvedOf, involvedRowsJson } from "./involved";

/*
 * A decision's question (its payload, title and customer's name) and its answer are the customer's and the staff's
 * words: stored sealed under the thread's subject key (lib/db/vault.ts). What writes them seals them
 * ({@link sealedDecisionFields}, {@link resolveDecision}); every function here that returns decisions returns them
 * opened, their threads' keys looked up in one statement.
 */

/** The sealed fields of a decision. */
type SealedFields = Pick<Decision, "payload" | "title" | "customerName" | "answer">;

/** A decision's question fields as stored, sealed by `sealer` (the thread's {@link RowSealer}). */
export function sealedDecisionFields<T extends Partial<SealedFields>>(sealer: RowSealer, fields: T): T {
  const out: Record<string, unknown> = { ...fields };
  if ("payload" in fields) out.payload = sealer.json(fields.payload);
  if ("answer" in fields) out.answer = sealer.json(fields.answer);
  if ("title" in fields) out.title = sealer.text(fields.title ?? null);
  if ("customerName" in fields) out.customerName = sealer.text(fields.customerName ?? null);
  return out as T;
}

/** The question kind of a durable timer: never escalated, answered `fired` when due (lib/queue/deadlines.ts). */
export const TIMER_ACTION = "wait_timer";

/** A wait timer's duration, read from its question before it is sealed (the deadline trigger reads `wait_ms`). */
export function waitMsOf(action: string, payload: unknown): number | null {
  if (action !== TIMER_ACTION || typeof payload !== "object" || payload === null) return null;
  const ms = Number((payload as { durationMs?: unknown }).durationMs);
  return Number.isFinite(ms) ? Math.max(0, Math.round(ms)) : null;
}

/** An answer as a word, kept plain beside the sealed answer for the metrics (`decisions.outcome`). */
export function outcomeOf(resumeStatus: ResumeStatus, answer: unknown): string {
  if (resumeStatus === "cancelled") return "cancelled";
  const a = (typeof answer === "object" && answer !== null ? answer : {}) as {
    decision?: unknown;
    choice?: unknown;
  };
  const word =
    typeof a.decision === "string" ? a.decision : typeof a.choice === "string" ? a.choice : "answered";
  return word.slice(0, 64);
}

/** A decision's stored fields, opened (a destroyed key's read as erased). */
export async function openedDecision<T extends Partial<SealedFields> & { threadId: string }>(
  db: KeySource,
  row: T,
): Promise<T> {
  const out: Record<string, unknown> = { ...row };
  if ("payload" in row) out.payload = await openThreadJson(db, row.threadId, row.payload);
  if ("answer" in row) out.answer = await openThreadJson(db, row.threadId, row.answer);
  if ("title" in row) out.title = await openThreadText(db, row.threadId, row.title ?? null);
  if ("customerName" in row)
    out.customerName = await openThreadText(db, row.threadId, row.customerName ?? null);
  return out as T;
}

/** {@link openedDecision} for rows of many threads: their keys are looked up in one statement first. */
export async function openedDecisions<T extends Partial<SealedFields> & { threadId: string }>(
  db: KeySource,
  rows: readonly T[],
): Promise<T[]> {
  if (rows.length === 0) return [];
  await primeThreadKeys(
    db,
    rows.map((r) => r.threadId),
  );
  return Promise.all(rows.map((row) => openedDecision(db, row)));
}

/** One thread's rows, on a handle. */
type ThreadScope = { db: Queryable; threadId: string };

/** Pending decisions of a thread (the interrupts still waiting for an answer). */
export async function listPendingDecisions({ db, threadId }: ThreadScope): Promise<Decision[]> {
  return listDecisionsIn({ db, threadId, status: "pending" });
}

/** The pending decisions of several threads in one statement: thread id → its decisions, as {@link listPendingDecisions} orders them. */
export async function listPendingDecisionsOf({
  db,
  threadIds,
  status = "pending",
}: {
  db: Queryable;
  threadIds: readonly string[];
  /** `answered`: the staged answers of each thread instead (see {@link listStagedDecisions}); `resolved`: those taken. */
  status?: "pending" | "answered" | "resolved";
}): Promise<Map<string, Decision[]>> {
  const ids = [...new Set(threadIds)];
  const out = new Map<string, Decision[]>();
  if (ids.length === 0) return out;
  const rows = await db
    .select()
    .from(decisions)
    .where(and(sql`${decisions.threadId} = ANY(${sql.param(ids)}::text[])`, eq(decisions.status, status)))
    .orderBy(decisions.resolvedAt, decisions.createdAt);
  for (const row of await openedDecisions(db, rows)) {
    const list = out.get(row.threadId);
    if (list) list.push(row);
    else out.set(row.threadId, [row]);
  }
  return out;
}

/** The decisions of a thread already taken (resolved), in the order they were answered. */
export async function listResolvedDecisions({ db, threadId }: ThreadScope): Promise<Decision[]> {
  return listDecisionsIn({ db, threadId, status: "resolved" });
}

/** A thread's decisions in one ledger status, in the order they were answered (then raised). */
async function listDecisionsIn({
  db,
  threadId,
  status,
}: {
  db: Queryable;
  threadId: string;
  status: Decision["status"];
}): Promise<Decision[]> {
  return openedDecisions(
    db,
    await db
      .select()
      .from(decisions)
      .where(and(eq(decisions.threadId, threadId), eq(decisions.status, status)))
      .orderBy(decisions.resolvedAt, decisions.createdAt),
  );
}

export async function getDecisions({
  db,
  interruptIds,
}: {
  db: Queryable;
  interruptIds: string[];
}): Promise<Decision[]> {
  if (interruptIds.length === 0) return [];
  return openedDecisions(
    db,
    await db.select().from(decisions).where(inArray(decisions.interruptId, interruptIds)),
  );
}

/** All decisions of a thread, oldest first (thread page, audit). */
export async function listThreadDecisions({
  db,
  threadId,
}: {
  db: Queryable;
  threadId: string;
}): Promise<Decision[]> {
  return openedDecisions(
    db,
    await db.select().from(decisions).where(eq(decisions.threadId, threadId)).orderBy(decisions.createdAt),
  );
}

/**
 * Record interrupts the graph raised as pending decisions. An id already in the ledger is left as it is (the ledger
 * is append-only in spirit: a decision once taken is never reopened).
 */
export async function recordPendingDecisions({
  db,
  rows,
}: {
  db: Queryable;
  rows: (Pick<
    Decision,
    | "interruptId"
    | "threadId"
    | "runId"
    | "checkpointId"
    | "action"
    | "payload"
    | "title"
    | "orderId"
    | "customerName"
    | "amountCents"
    | "currency"
  > &
    Partial<Pick<Decision, "findings">>)[];
}): Promise<void> {
  if (rows.length === 0) return;
  const sealed = [];
  for (const row of rows) {
    const plain = { ...row, waitMs: waitMsOf(row.action, row.payload) };
    sealed.push(sealedDecisionFields(await rowSealer(db, row.threadId, "mark"), plain));
  }
  await db.insert(decisions).values(sealed).onConflictDoNothing({ target: decisions.interruptId });
}

/**
 * Pending decisions of a thread that are no longer the head's (the thread moved on, e.g. a fork made another branch
 * the head) become `superseded`.
 */
export async function supersedeOtherPending({
  db,
  threadId,
  keep,
}: {
  db: Queryable;
  threadId: string;
  keep: string[];
}): Promise<void> {
  // An answer staged for a resume that never came (the thread moved on first) no longer applies either.
  const base = and(eq(decisions.threadId, threadId), inArray(decisions.status, ["pending", "answered"]));
  await db
    .update(decisions)
    .set({ status: "superseded" })
    .where(keep.length > 0 ? and(base, notInArray(decisions.interruptId, keep)) : base);
}

/**
 * A thread's open decisions in one statement: those still `pending` and the staged answers (`answered`), each list
 * ordered as {@link listPendingDecisions} and {@link listStagedDecisions} order theirs.
 */
export async function listOpenDecisions({
  db,
  threadId,
  involvedOf: thread,
}: ThreadScope & {
  /** Also who was involved in the thread (four-eyes: `listInvolvedPrincipals`), read in the same statement. */
  involvedOf?: InvolvedThread;
}): Promise<{
  pending: Decision[];
  staged: Decision[];
  involved?: InvolvedPrincipal[];
  /** With `involvedOf`: the decisions the thread has taken (a policy's `decided`), read in the same statement. */
  decided?: TakenDecision[];
}> {
  const open = and(eq(decisions.threadId, threadId), inArray(decisions.status, ["pending", "answered"]));
  const order = [decisions.resolvedAt, decisions.createdAt] as const;
  if (!thread) {
    const rows = await db
      .select()
      .from(decisions)
      .where(open)
      .orderBy(...order);
    return split(await openedDecisions(db, rows));
  }
  // With no open decision there is no row to carry the involved principals: the caller reads them if it needs them.
  const rows = await db
    .select({ decision: decisions, involved: involvedRowsJson(threadId), decided: takenJson(threadId) })
    .from(decisions)
    .where(open)
    .orderBy(...order);
  const first = rows[0];
  const opened = await openedDecisions(
    db,
    rows.map((r) => r.decision),
  );
  const decided = first
    ? await Promise.all(
        first.decided.map(async (d) => ({ ...d, answer: await openThreadJson(db, threadId, d.answer) })),
      )
    : undefined;
  return {
    ...split(opened),
    ...(first ? { involved: involvedOf(thread, first.involved), decided } : {}),
  };
}

/** A decision a thread has taken, as a policy reads it (who took it, and how). */
export interface TakenDecision {
  interruptId: string;
  action: string;
  answer: unknown;
  resolvedById: string | null;
}

/** The thread's resolved decisions as JSON, oldest answer first: a column of {@link listOpenDecisions}' statement. */
function takenJson(threadId: string) {
  return sql<TakenDecision[]>`(SELECT coalesce(json_agg(json_build_object('interruptId', d.interrupt_id,
    'action', d.action, 'answer', d.answer, 'resolvedById', d.resolved_by_id)
    ORDER BY d.resolved_at, d.created_at), '[]'::json)
    FROM ${decisions} d WHERE d.thread_id = ${threadId} AND d.status = 'resolved')`;
}

function split(rows: Decision[]): { pending: Decision[]; staged: Decision[] } {
  return {
    pending: rows.filter((d) => d.status === "pending"),
    staged: rows.filter((d) => d.status === "answered"),
  };
}

/**
 * Answers already taken on a thread but not yet sent to the graph (`answered`): the other interrupts of the same
 * super-step were still pending when they came in (parallel approvals answered card by card).
 */
export async function listStagedDecisions({ db, threadId }: ThreadScope): Promise<Decision[]> {
  return listDecisionsIn({ db, threadId, status: "answered" });
}

/** {@link listStagedDecisions} for several threads in one statement: thread id → its staged answers. */
export function listStagedDecisionsOf({
  db,
  threadIds,
}: {
  db: Queryable;
  threadIds: readonly string[];
}): Promise<Map<string, Decision[]>> {
  return listPendingDecisionsOf({ db, threadIds, status: "answered" });
}

/** Staged answers of a thread become `resolved` by the resume run that carries them to the graph. */
export async function attachStagedDecisions({
  db,
  threadId,
  resumeRunId,
}: {
  db: Queryable;
  threadId: string;
  resumeRunId: string;
}): Promise<void> {
  await db
    .update(decisions)
    .set({ status: "resolved", resumeRunId })
    .where(and(eq(decisions.threadId, threadId), eq(decisions.status, "answered")));
}

/**
 * Compare-and-set `pending → resolved` for one decision (or `pending → answered` when `resumeRunId` is null: the
 * answer is taken and waits for the other decisions of its super-step). Returns false when it was no longer pending (someone else
 * decided first): the caller turns that into a 409.
 */
export async function resolveDecision({
  db,
  interruptId,
  resumeStatus,
  answer,
  resolvedBy,
  resolvedById,
  resolverRole,
  resumeRunId,
  threadId,
}: {
  db: Queryable;
  interruptId: string;
  /** The decision's thread, when the caller knows it (its answer is sealed under the thread's key). */
  threadId?: string;
  resumeStatus: ResumeStatus;
  answer: unknown;
  resolvedBy: string;
  resolvedById?: string | null;
  resolverRole?: string | null;
  resumeRunId: string | null;
}): Promise<boolean> {
  const [row] = threadId
    ? [{ threadId }]
    : await db
        .select({ threadId: decisions.threadId })
        .from(decisions)
        .where(eq(decisions.interruptId, interruptId));
  if (!row) return false;
  const updated = await db
    .update(decisions)
    .set({
      status: resumeRunId ? "resolved" : "answered",
      resumeStatus,
      answer: (await rowSealer(db, row.threadId)).json(answer),
      outcome: outcomeOf(resumeStatus, answer),
      resolvedBy,
      resolvedById: resolvedById ?? null,
      resolverRole: resolverRole ?? null,
      resolvedAt: sql`now()`,
      resumeRunId,
    })
    .where(and(eq(decisions.interruptId, interruptId), eq(decisions.status, "pending")))
    .returning({ id: decisions.interruptId });
  return updated.length === 1;
}
