import "server-only";
import { and, desc, eq, gte, ilike, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { AuditAction } from "@/lib/contract/audit";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { rowsOf } from "../rows";
import { type AuditEntry, auditLog } from "../schema";
import type { Alongside, Queryable } from "../tx";
import {
  isSealedJson,
  type KeySource,
  openThreadJson,
  primeThreadKeys,
  type RowSealer,
  rowSealer,
} from "../vault";

export interface AuditInput {
  action: AuditAction;
  actor: Pick<Principal, "id" | "label" | "role">;
  threadId?: string | null;
  checkpointId?: string | null;
  interruptId?: string | null;
  payload?: unknown;
  answer?: unknown;
  detail?: Record<string, unknown>;
  ipAddress?: string | null;
}

/** Append to the audit trail (the only write it ever gets; a trigger refuses updates and deletes). */
export async function recordAudit({ db, entries }: { db: Queryable; entries: AuditInput[] }): Promise<void> {
  if (entries.length === 0) return;
  await db.insert(auditLog).values(await auditRows(db, entries));
}

/**
 * The insert of {@link recordAudit}, not yet run: to write it in one statement with other writes (a CTE, see
 * `insertRun`'s `alongside`). `entries` must not be empty.
 */
export async function auditInsert({
  db,
  entries,
}: {
  db: Queryable;
  entries: AuditInput[];
}): Promise<Alongside> {
  const insert = db.insert(auditLog).values(await auditRows(db, entries));
  // Not the builder itself: it is a thenable, which an async function would run on return.
  return { getSQL: () => insert.getSQL() };
}

/**
 * The rows of audit entries. An entry about a thread keeps what it says of the thread (the question, the answer, the
 * detail) sealed under the thread's key, as the thread's own rows: the trail digests the sealed values, so destroying
 * the key erases them without rewriting a row. An entry about an erased customer's thread records them as erased,
 * never in clear; who did what, when and on which thread stay plain.
 */
async function auditRows(db: Queryable, entries: AuditInput[]) {
  const sealers = new Map<string, RowSealer>();
  for (const threadId of new Set(entries.flatMap((e) => (e.threadId ? [e.threadId] : [])))) {
    sealers.set(threadId, await rowSealer(db, threadId, "mark", "sealed-records"));
  }
  return entries.map((e) => {
    const sealer = e.threadId ? sealers.get(e.threadId) : undefined;
    const seal = (value: unknown) =>
      value === null || value === undefined || !sealer ? value : sealer.json(value);
    return {
      action: e.action,
      actorId: e.actor.id,
      actor: e.actor.label,
      actorRole: e.actor.role ?? null,
      threadId: e.threadId ?? null,
      checkpointId: e.checkpointId ?? null,
      interruptId: e.interruptId ?? null,
      payload: seal(e.payload) ?? null,
      answer: seal(e.answer) ?? null,
      detail: (seal(e.detail) as Record<string, unknown> | undefined) ?? null,
      ipAddress: e.ipAddress ?? null,
    };
  });
}

/** Audit entries with what they say of their threads opened (sealed under the threads' keys; erased: `{erased}`). */
export async function openAuditEntries(db: KeySource, rows: AuditEntry[]): Promise<AuditEntry[]> {
  const sealed = (row: AuditEntry) =>
    isSealedJson(row.payload) || isSealedJson(row.answer) || isSealedJson(row.detail);
  const threads = rows.flatMap((r) => (r.threadId && sealed(r) ? [r.threadId] : []));
  if (threads.length === 0) return rows;
  await primeThreadKeys(db, threads);
  return Promise.all(
    rows.map(async (row) => {
      if (!row.threadId || !sealed(row)) return row;
      const threadId = row.threadId;
      return {
        ...row,
        payload: await openThreadJson(db, threadId, row.payload),
        answer: await openThreadJson(db, threadId, row.answer),
        detail: (await openThreadJson(db, threadId, row.detail)) as AuditEntry["detail"],
      };
    }),
  );
}

/**
 * When the newest `limit` failed sign-ins of `email` happened, within the last `windowSeconds` and after its last
 * successful sign-in, newest first (fewer than `limit` means the account may try again). Reads the audit trail,
 * which every failed password check is written to (index on actor, at).
 */
export async function recentSignInFailures({
  db,
  email,
  windowSeconds,
  limit,
}: {
  db: Queryable;
  email: string;
  windowSeconds: number;
  limit: number;
}): Promise<Date[]> {
  const since = new Date(Date.now() - windowSeconds * 1000);
  const lastSuccess = db
    .select({ at: sql`max(${auditLog.at})` })
    .from(auditLog)
    .where(and(eq(auditLog.action, "sign_in"), eq(auditLog.actor, email)));
  const rows = await db
    .select({ at: auditLog.at })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.action, "sign_in_failed"),
        eq(auditLog.actor, email),
        gte(auditLog.at, since),
        sql`${auditLog.at} > coalesce((${lastSuccess}), '-infinity'::timestamptz)`,
      ),
    )
    .orderBy(desc(auditLog.at))
    .limit(limit);
  return rows.map((r) => r.at);
}

export interface AuditFilter {
  action?: AuditAction;
  /** Part of the actor's email or key name. */
  actor?: string;
  threadId?: string;
  from?: Date;
  to?: Date;
  /** Entries older than this id (keyset paging, newest first). */
  before?: number;
  limit: number;
}

/** The audit trail newest first, filtered, keyset-paged on the id. */
export async function listAudit({
  db,
  filter,
  hiddenAgents = [],
}: {
  db: Queryable;
  filter: AuditFilter;
  /** Agents whose threads the reader may not see (teams): their threads' entries are left out. */
  hiddenAgents?: readonly string[];
}): Promise<{ items: AuditEntry[]; nextBefore: number | null }> {
  const where: SQL[] = [];
  if (hiddenAgents.length > 0) {
    where.push(
      sql`(${auditLog.threadId} IS NULL OR NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = ${auditLog.threadId}
        AND t.agent_id IN (${sql.join(
          hiddenAgents.map((a) => sql`${a}`),
          sql`, `,
        )})))`,
    );
  }
  if (filter.action) where.push(eq(auditLog.action, filter.action));
  if (filter.actor) {
    const like = `%${filter.actor.replace(/[%_\\]/g, "\\$&")}%`;
    where.push(or(ilike(auditLog.actor, like), eq(auditLog.actorId, filter.actor)) as SQL);
  }
  if (filter.threadId) where.push(eq(auditLog.threadId, filter.threadId));
  if (filter.from) where.push(gte(auditLog.at, filter.from));
  if (filter.to) where.push(lte(auditLog.at, filter.to));
  if (filter.before !== undefined) {
    if (!Number.isSafeInteger(filter.before) || filter.before < 1) {
      throw new AppError("bad_request:audit_cursor", "The audit cursor is not valid.");
    }
    where.push(lt(auditLog.id, filter.before));
  }
  const rows = await db
    .select()
    .from(auditLog)
    .where(where.length > 0 ? and(...where) : sql`true`)
    .orderBy(desc(auditLog.id))
    .limit(filter.limit + 1);
  const more = rows.length > filter.limit;
  const items = await openAuditEntries(db, more ? rows.slice(0, filter.limit) : rows);
  return { items, nextBefore: more ? (items.at(-1)?.id ?? null) : null };
}

/** Rows the chainer links per statement: a batch is one short transaction holding only the chainer's own lock. */
export const AUDIT_CHAIN_BATCH = 5_000;

/**
 * Link committed audit rows into the hash chain (migration audit_chain_after_commit: inserts only digest themselves,
 * so no audited transaction waits for another). Batches until nothing is left; `wait: false` gives way at once to a
 * chainer already at work (another instance), returning what this call linked.
 */
export async function chainAuditTrail({
  db,
  wait = true,
}: {
  db: Queryable;
  wait?: boolean;
}): Promise<number> {
  let linked = 0;
  for (;;) {
    const [row] = rowsOf<{ n: number }>(
      await db.execute(sql`SELECT audit_log_chain_pending(${AUDIT_CHAIN_BATCH}, ${wait}) AS n`),
    );
    const n = Number(row?.n ?? 0);
    if (n <= 0) return linked;
    linked += n;
    if (n < AUDIT_CHAIN_BATCH) return linked;
  }
}

/** A row of the audit trail that breaks its hash chain or whose content no longer matches its digest. */
export interface AuditProblem {
  id: number;
  chainSeq: number | null;
  problem: string;
}

/**
 * Verify the audit trail's hash chain (migration audit_chain_erasure): every row chained in order, each row hash the
 * hash of the previous one with its own content digest, and each row's content matching its digest — or, for a row
 * an erasure rewrote, the digest that erasure recorded. `ok` with no problems means the trail verifies.
 */
export async function verifyAuditTrail({
  db,
}: {
  db: Queryable;
}): Promise<{ ok: boolean; rows: number; problems: AuditProblem[] }> {
  // Everything committed so far is chained before it is checked; a row the chainer could not reach in 5 minutes is a
  // problem of its own ("not chained in time").
  await chainAuditTrail({ db });
  const problems = rowsOf<{ id: string; chain_seq: string | null; problem: string }>(
    await db.execute(sql`SELECT id, chain_seq, problem FROM audit_log_verify() LIMIT 100`),
  ).map((r) => ({
    id: Number(r.id),
    chainSeq: r.chain_seq === null ? null : Number(r.chain_seq),
    problem: r.problem,
  }));
  const [count] = rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM audit_log`));
  return { ok: problems.length === 0, rows: count?.n ?? 0, problems };
}

/** An audit row's rewritable content, as erasure reads it (JSON values, parsed). */
export interface AuditContent {
  id: number;
  payload: unknown;
  answer: unknown;
  detail: unknown;
}

/** The audit rows of these threads (erasure rewrites their personal values; no other row). */
export async function listAuditOfThreads({
  db,
  threadIds,
}: {
  db: Queryable;
  threadIds: string[];
}): Promise<AuditContent[]> {
  if (threadIds.length === 0) return [];
  const rows = rowsOf<{ id: string; payload: string | null; answer: string | null; detail: string | null }>(
    await db.execute(sql`SELECT id, payload::text AS payload, answer::text AS answer, detail::text AS detail
      FROM audit_log WHERE thread_id = ANY(${sql.param(threadIds)}::text[]) ORDER BY id`),
  );
  const parse = (text: string | null) => (text === null ? null : JSON.parse(text));
  return rows.map((r) => ({
    id: Number(r.id),
    payload: parse(r.payload),
    answer: parse(r.answer),
    detail: parse(r.detail),
  }));
}

/**
 * The one permitted change to the audit trail: new payload / answer / detail for rows of the subject's threads (never
 * their actor), through the database function `audit_log_erase_rows` (SECURITY DEFINER, role `audit_eraser`), which
 * refuses a row of any other thread and first appends the `erasure` entry (`detail` must hold no personal data).
 * Returns that entry's id and how many rows it rewrote.
 */
export async function eraseAuditRows({
  db,
  threadIds,
  rows,
  actor,
  detail,
}: {
  db: Queryable;
  threadIds: string[];
  /** Each changed row with only its changed fields. */
  rows: Array<{ id: number } & Partial<Omit<AuditContent, "id">>>;
  actor: Pick<Principal, "id" | "label" | "role">;
  detail: Record<string, unknown>;
}): Promise<{ erasureId: number; auditRows: number }> {
  const [row] = rowsOf<{ id: string }>(
    await db.execute(sql`SELECT audit_log_erase_rows(${sql.param(threadIds)}::text[], ${JSON.stringify(rows)}::jsonb,
      ${actor.id}, ${actor.label}, ${actor.role ?? null}, ${JSON.stringify(detail)}::jsonb) AS id`),
  );
  return { erasureId: Number(row?.id), auditRows: rows.length };
}

/** The latest erasure entry naming one of these customer references (`customerRef`), if any. */
export async function findErasure({
  db,
  customerRefs,
}: {
  db: Queryable;
  customerRefs: readonly string[];
}): Promise<{ id: number; at: Date } | null> {
  const [row] = await db
    .select({ id: auditLog.id, at: auditLog.at })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.action, "erasure"),
        sql`${auditLog.detail} ->> 'customerRef' = ANY(${sql.param([...customerRefs])}::text[])`,
      ),
    )
    .orderBy(desc(auditLog.id))
    .limit(1);
  return row ? { id: Number(row.id), at: row.at } : null;
}
