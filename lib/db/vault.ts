import "server-only";
import { eq, inArray, ne, type SQL, sql } from "drizzle-orm";
import { AppError, errorCodeOf } from "@/lib/contract/errors";
import { blindIndex, dataKeys, newDataKey, open, seal } from "@/lib/platform/data-keys";
import { peekSingleton, singleton } from "@/lib/platform/singleton";
import type { AppDb } from "./open";
import { rowsOf } from "./rows";
import { erasedSubjects, subjectKeys } from "./schema/vault";
import type { SqlClient } from "./sql-client";
import type { Queryable } from "./tx";

/*
 * The data subjects' keys (DESIGN 19; the table is lib/db/schema/vault.ts, the master key lib/platform/data-keys.ts).
 * A subject's key is made when its first thread is filed, unwrapped when a value of theirs is sealed or opened (kept
 * unwrapped in this process for KEY_TTL_MS), and destroyed by erasure. What a destroyed key sealed reads as erased.
 */

/**
 * How long an unwrapped key (or the fact that a thread has none) is kept in memory: an erasure on another instance is
 * felt here within it (this instance's own erasures at once).
 */
const KEY_TTL_MS = 5_000;

/** The subject id of a customer known by email: a blind index (the address itself is never stored here). */
export function customerSubjectId(email: string): string {
  return `c_${blindIndex("email", email.trim().toLowerCase())}`;
}

/** The subject id of a thread that names no known customer: its own. */
export function threadSubjectId(threadId: string): string {
  return `t_${threadId}`;
}

/** A thread's key: `null` when the thread has no subject (plaintext), `erased` when its subject's key is destroyed. */
export type ThreadKey = { subjectId: string; key: Buffer } | { subjectId: string; erased: true } | null;

/** Unwrapped keys by thread, process-wide (every bundle's copy of this module shares it: erasure empties it). */
const keyCache = () =>
  singleton("vault-keys", () => new Map<string, { at: number; value: Promise<ThreadKey> }>());

function remember(threadId: string, value: Promise<ThreadKey>): Promise<ThreadKey> {
  const cache = keyCache();
  if (cache.size > 10_000) cache.clear();
  cache.set(threadId, { at: Date.now(), value });
  value.catch(() => cache.delete(threadId));
  return value;
}

const EVERY_INSTANCE_READS = `SELECT NOT EXISTS (SELECT 1 FROM instances
  WHERE stopped_at IS NULL AND seen_at > now() - interval '2 minutes'
    AND NOT ($1 = ANY(coalesce(reads, '{}'::text[])))) AS ok`;

/**
 * What is sealed: `sealed`, the saver's checkpoint values and writes; `sealed-rows`, the thread's rows (events,
 * inputs, emails, effects' payloads, the decision ledger's words); `sealed-records`, the rest of what is about a
 * customer (the ticket itself, searched through a blind index; the shop's orders and accounts; account changes; the
 * audit trail's words; notifications; error texts) — the formats of `instances.reads` (lib/db/queries/instances.ts).
 */
export type SealedFormat = "sealed" | "sealed-rows" | "sealed-records";

/** Every format this build writes sealed. */
export const SEALED_FORMATS: readonly SealedFormat[] = ["sealed", "sealed-rows", "sealed-records"];

/**
 * Whether values may be sealed in `format` now: when every live instance reads it (`instances.reads`). Mid-rollout
 * from a release before, which cannot open them, they are written as before (and sealed by `npm run keys -- seal`
 * afterwards); the answer is kept for 5 s.
 */
export async function sealingAllowed(
  sqlClient: SqlClient,
  format: SealedFormat = "sealed",
): Promise<boolean> {
  const memo = singleton(`vault-sealing:${format}`, () => ({ at: 0, ok: Promise.resolve(true) }));
  if (Date.now() - memo.at > 5_000) {
    memo.at = Date.now();
    memo.ok = sqlClient
      .query<{ ok: boolean }>(EVERY_INSTANCE_READS, [format], `vault_sealing_${format.replace("-", "_")}`)
      .then(([row]) => row?.ok !== false);
    memo.ok.catch(() => {
      memo.at = 0;
    });
  }
  return memo.ok;
}

/**
 * Unwrapped data keys by their wrapped bytes, for 10 minutes: a key service is asked once per key, not once per
 * thread read. Safe against erasure: a key is only ever looked up here with wrapped bytes just read from its row, and
 * a destroyed key has no row.
 */
const unwrapped = () =>
  singleton("vault-unwrapped", () => new Map<string, { at: number; key: Promise<Buffer> }>());
const UNWRAPPED_TTL_MS = 600_000;

function unwrapCached(masterKeyId: string, wrapped: Buffer): Promise<Buffer> {
  const cache = unwrapped();
  const id = `${masterKeyId}:${wrapped.toString("base64")}`;
  const hit = cache.get(id);
  if (hit && Date.now() - hit.at < UNWRAPPED_TTL_MS) return hit.key;
  if (cache.size > 10_000) cache.clear();
  const key = dataKeys().service.unwrap(masterKeyId, wrapped);
  cache.set(id, { at: Date.now(), key });
  key.catch(() => cache.delete(id));
  return key;
}

/** A thread just filed under `subjectId`, whose key this process holds: its first write needs no lookup. */
export function primeThreadKey(threadId: string, subjectId: string, key: Buffer): void {
  remember(threadId, Promise.resolve({ subjectId, key }));
}

/** Forget every key this process holds, and whether sealing is allowed (erasure calls it; tests too). */
export function forgetKeys(): void {
  keyCache().clear();
  unwrapped().clear();
  forgetSealingAnswers();
}

/**
 * Ask afresh, at the next write, whether every live instance reads each sealed format: an instance came live (the
 * database announces it on {@link INSTANCES_CHANNEL}).
 */
export function forgetSealingAnswers(): void {
  for (const format of SEALED_FORMATS) {
    const memo = peekSingleton<{ at: number }>(`vault-sealing:${format}`);
    if (memo) memo.at = 0;
  }
}

/** Where the database announces an instance that came live (migration 0046: a trigger on `instances`). */
export const INSTANCES_CHANNEL = "hitl_instances";

interface KeyRow {
  subject_id: string | null;
  master_key_id: string | null;
  wrapped: Uint8Array | null;
  erased: boolean;
}

const THREAD_KEY = `SELECT t.subject_id, k.master_key_id, k.wrapped, (e.subject_id IS NOT NULL) AS erased
  FROM threads t
  LEFT JOIN vault.subject_keys k ON k.subject_id = t.subject_id
  LEFT JOIN vault.erased_subjects e ON e.subject_id = t.subject_id
  WHERE t.id = $1`;

/** The key that seals `threadId`'s values (see {@link ThreadKey}); a key service that fails is 503. */
export function threadKey(
  sqlClient: SqlClient,
  threadId: string,
  { fresh = false }: { fresh?: boolean } = {},
): Promise<ThreadKey> {
  const hit = keyCache().get(threadId);
  if (hit && !fresh && Date.now() - hit.at < KEY_TTL_MS) return hit.value;
  return remember(
    threadId,
    (async () => {
      const [row] = await sqlClient.query<KeyRow>(THREAD_KEY, [threadId], "vault_thread_key");
      return row?.subject_id ? keyOfRow(row.subject_id, row) : null;
    })(),
  );
}

/**
 * Make `subjectId`'s key unless it has one. Wraps before it writes: a key service that fails answers 503 and nothing
 * is written. A customer who comes back after their erasure gets a new key (what the old one sealed stays unreadable).
 */
export async function ensureSubjectKey(db: Queryable, subjectId: string): Promise<Buffer> {
  const [existing] = await db
    .select({ masterKeyId: subjectKeys.masterKeyId, wrapped: subjectKeys.wrapped })
    .from(subjectKeys)
    .where(eq(subjectKeys.subjectId, subjectId));
  if (existing) return unwrapCached(existing.masterKeyId, Buffer.from(existing.wrapped));
  const key = newDataKey();
  const { keyId, wrapped } = await dataKeys().service.wrap(key);
  const [made] = await db
    .insert(subjectKeys)
    .values({ subjectId, masterKeyId: keyId, wrapped })
    .onConflictDoNothing()
    .returning({ subjectId: subjectKeys.subjectId });
  // Another request made it a moment before: theirs is the key.
  return made ? key : ensureSubjectKey(db, subjectId);
}

/** Whether `subjectId` was erased and has no key since (a customer who came back has a new one). */
export async function isErasedSubject(db: Queryable, subjectId: string | null): Promise<boolean> {
  if (!subjectId) return false;
  const [row] = await db
    .select({ subjectId: erasedSubjects.subjectId })
    .from(erasedSubjects)
    .where(
      sql`${erasedSubjects.subjectId} = ${subjectId} AND NOT EXISTS (SELECT 1 FROM ${subjectKeys} k WHERE k.subject_id = ${subjectId})`,
    );
  return Boolean(row);
}

/**
 * Destroy the keys of `subjectIds` and record their erasure, in the caller's transaction. Returns how many keys
 * were destroyed (a subject erased before, or with no key, counts 0).
 */
export async function destroySubjectKeys(
  db: Queryable,
  subjectIds: readonly string[],
  erasureId: string,
): Promise<number> {
  if (subjectIds.length === 0) return 0;
  const destroyed = await db
    .delete(subjectKeys)
    .where(inArray(subjectKeys.subjectId, [...subjectIds]))
    .returning({ subjectId: subjectKeys.subjectId });
  await db
    .insert(erasedSubjects)
    .values(subjectIds.map((subjectId) => ({ subjectId, erasureId })))
    .onConflictDoNothing();
  forgetKeys();
  return destroyed.length;
}

/** The prefix of a sealed saver value's type: `sealed:<the serializer's type>`. */
export const SEALED = "sealed:";

/**
 * The stored type of a sealed value: `sealed:<type>`, and for a tool's message (a write of a task `createAgent` pushed
 * for a tool call) `;tool=<name>`: the history names such a step by its tool, which is no personal data.
 */
export function sealedType(type: string, tool?: string | null): string {
  return tool && /^[A-Za-z0-9_.:-]{1,128}$/.test(tool) ? `${SEALED}${type};tool=${tool}` : `${SEALED}${type}`;
}

/** The serializer's type inside a sealed value's stored type. */
export function innerType(stored: string): string {
  const inner = stored.slice(SEALED.length);
  const semi = inner.indexOf(";");
  return semi < 0 ? inner : inner.slice(0, semi);
}

/**
 * Seal a serialized value under its subject's key, bound to the subject: a value moved to another subject's thread
 * does not open (within one subject's threads it may move: a copy of a thread, its archive line).
 */
export function sealValue(key: Buffer, subjectId: string, bytes: Uint8Array): Buffer {
  return seal(key, bytes, `subject:${subjectId}`);
}

/** Open a value sealed by {@link sealValue}. */
export function openValue(key: Buffer, subjectId: string, sealed: Uint8Array): Buffer {
  return open(key, sealed, `subject:${subjectId}`);
}

/**
 * A JSON value of a thread's rows (a run's input, a queued input) as its jsonb column stores it when sealed: the
 * value's JSON sealed under the thread's subject key ({@link sealValue}), base64.
 */
export interface SealedJson {
  $sealed: string;
}

/** Whether a stored JSON value is a {@link SealedJson} envelope. */
export function isSealedJson(value: unknown): value is SealedJson {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as Record<string, unknown>).$sealed === "string" &&
    Object.keys(value).length === 1
  );
}

/** What a sealed JSON value reads as once its subject's key is destroyed. */
export const ERASED_JSON: Readonly<{ erased: true }> = Object.freeze({ erased: true });

/** Whether an opened JSON value is {@link ERASED_JSON} (its key destroyed). */
export function isErasedValue(value: unknown): boolean {
  return value === ERASED_JSON;
}

/** A {@link SqlClient} over a Drizzle handle: the key lookups run in the caller's transaction (a thread it just filed). */
function sqlOn(db: Queryable): SqlClient {
  return {
    async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
      const chunks: SQL[] = text
        .split(/\$(\d+)/)
        .map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${sql.param(params[Number(part) - 1])}`));
      return rowsOf<R>(await db.execute(sql.join(chunks)));
    },
  };
}

/**
 * The key a value of `threadId`'s rows is sealed with when written now: null when it is written in clear (a thread
 * with no subject; mid-rollout, see {@link sealingAllowed}). A thread whose subject was erased is refused
 * (`conflict:subject_erased`): nothing more is written about them.
 */
export async function rowSealingKey(
  db: Queryable,
  threadId: string,
  format: SealedFormat = "sealed-rows",
): Promise<{ subjectId: string; key: Buffer } | null> {
  const client = sqlOn(db);
  const key = await threadKey(client, threadId);
  if (key === null) return null;
  if ("erased" in key) {
    throw new AppError(
      "conflict:subject_erased",
      "This thread's customer was erased: nothing more is written about them.",
    );
  }
  return (await sealingAllowed(client, format)) ? key : null;
}

/**
 * The sealer of a ticket being filed under `subjectId` (whose key the caller just made or found): sealed once every
 * live instance reads sealed tickets, in clear before (mid-rollout; `npm run keys -- seal` seals it afterwards).
 */
export async function ticketSealer(
  db: Queryable,
  subject: { subjectId: string; key: Buffer },
): Promise<RowSealer | null> {
  return (await sealingAllowed(sqlOn(db), "sealed-records")) ? keySealer(subject) : null;
}

/** Seal a JSON value of `threadId`'s rows for its jsonb column (as it is when the thread is written in clear). */
export async function sealThreadJson<T>(db: Queryable, threadId: string, value: T): Promise<T | SealedJson> {
  if (value === null || value === undefined) return value;
  return (await rowSealer(db, threadId)).json(value) as T | SealedJson;
}

/**
 * The value of a stored JSON value of `threadId`'s rows: opened when sealed, {@link ERASED_JSON} when its subject's key
 * was destroyed, as it is when stored in clear. A key service that fails is 503.
 */
export async function openThreadJson(db: KeySource, threadId: string, stored: unknown): Promise<unknown> {
  if (!isSealedJson(stored)) return stored;
  const key = await readingKey(db, threadId);
  if (key === null || "erased" in key) return ERASED_JSON;
  const bytes = openValue(key.key, key.subjectId, Buffer.from(stored.$sealed, "base64"));
  return JSON.parse(bytes.toString("utf8"));
}

/** The prefix of a text value sealed by {@link sealThreadText}: `sealed:v1:` + base64. */
export const SEALED_TEXT = "sealed:v1:";

/** What a sealed text reads as once its subject's key is destroyed. */
export const ERASED_TEXT = "[erased]";

/** Seals the values of one thread's rows, synchronously, once its key is known (see {@link rowSealer}). */
export interface RowSealer {
  json<T>(value: T): T | SealedJson | typeof ERASED_JSON;
  text<T extends string | null>(value: T): T | string;
}

const IN_CLEAR: RowSealer = { json: (value) => value, text: (value) => value };

/** Writes what a run of an erased subject's thread still records (its last events, its ledger rows) as erased. */
const AS_ERASED: RowSealer = {
  json: (value) => (value === null || value === undefined ? value : ERASED_JSON),
  text: (value) => (value === null ? value : ERASED_TEXT),
};

/**
 * The sealer of `threadId`'s rows now (sealed under its subject's key; in clear when the thread has none, or
 * mid-rollout). For an erased subject's thread: `refuse` answers 409 `conflict:subject_erased` (a new run, a new
 * email), `mark` writes every value as erased (what a run under way when the customer was erased still records as it
 * ends: never in clear).
 */
export async function rowSealer(
  db: Queryable,
  threadId: string,
  erased: "refuse" | "mark" = "refuse",
  /** The format the rows are of (those new in a release are sealed once every instance reads them). */
  format: SealedFormat = "sealed-rows",
): Promise<RowSealer> {
  let key: Awaited<ReturnType<typeof rowSealingKey>>;
  try {
    key = await rowSealingKey(db, threadId, format);
  } catch (error) {
    if (erased === "mark" && errorCodeOf(error) === "conflict:subject_erased") return AS_ERASED;
    throw error;
  }
  return key ? keySealer(key) : IN_CLEAR;
}

/** The {@link RowSealer} of one subject's key (the sealing job seals stored rows with it too). */
export function keySealer({ key: dataKey, subjectId }: { subjectId: string; key: Buffer }): RowSealer {
  const sealed = (text: string) =>
    sealValue(dataKey, subjectId, Buffer.from(text, "utf8")).toString("base64");
  return {
    json: (value) =>
      value === null || value === undefined ? value : { $sealed: sealed(JSON.stringify(value)) },
    text: (value) => (value === null ? value : SEALED_TEXT + sealed(value)),
  };
}

const THREAD_KEYS = `SELECT t.id, t.subject_id, k.master_key_id, k.wrapped, (e.subject_id IS NOT NULL) AS erased
  FROM threads t
  LEFT JOIN vault.subject_keys k ON k.subject_id = t.subject_id
  LEFT JOIN vault.erased_subjects e ON e.subject_id = t.subject_id
  WHERE t.id = ANY($1::text[])`;

/**
 * Look up the keys of many threads in one statement (a page of the inbox: rows of as many threads), so opening their
 * values after it asks nothing more of the database. Threads whose key this process holds are not asked again.
 */
export async function primeThreadKeys(db: KeySource, threadIds: Iterable<string>): Promise<void> {
  const cache = keyCache();
  const wanted = [...new Set(threadIds)].filter((id) => {
    const hit = cache.get(id);
    return !hit || Date.now() - hit.at >= KEY_TTL_MS;
  });
  if (wanted.length === 0) return;
  const rows = await clientOf(db).query<KeyRow & { id: string }>(THREAD_KEYS, [wanted], "vault_thread_keys");
  for (const row of rows)
    remember(row.id, row.subject_id ? keyOfRow(row.subject_id, row) : Promise.resolve(null));
}

/** Seal a text value of `threadId`'s rows for its text column (as it is when the thread is written in clear). */
export async function sealThreadText(db: Queryable, threadId: string, value: string): Promise<string>;
export async function sealThreadText(
  db: Queryable,
  threadId: string,
  value: string | null,
): Promise<string | null>;
export async function sealThreadText(
  db: Queryable,
  threadId: string,
  value: string | null,
): Promise<string | null> {
  if (value === null) return value;
  return (await rowSealer(db, threadId)).text(value);
}

/** The value of a stored text of `threadId`'s rows: opened when sealed, {@link ERASED_TEXT} once erased. */
export async function openThreadText(db: KeySource, threadId: string, stored: string): Promise<string>;
export async function openThreadText(
  db: KeySource,
  threadId: string,
  stored: string | null,
): Promise<string | null>;
export async function openThreadText(
  db: KeySource,
  threadId: string,
  stored: string | null,
): Promise<string | null> {
  if (stored === null || !stored.startsWith(SEALED_TEXT)) return stored;
  const key = await readingKey(db, threadId);
  if (key === null || "erased" in key) return ERASED_TEXT;
  return openValue(key.key, key.subjectId, Buffer.from(stored.slice(SEALED_TEXT.length), "base64")).toString(
    "utf8",
  );
}

/**
 * Rows naming their thread (`threadId`) with one text column of it opened (a page of the inbox, search hits: the
 * threads' titles): their keys are looked up in one statement.
 */
export async function openTextColumn<R extends { threadId: string }, K extends keyof R & string>(
  db: KeySource,
  rows: readonly R[],
  column: K,
): Promise<R[]> {
  const sealed = (row: R) =>
    typeof row[column] === "string" && (row[column] as string).startsWith(SEALED_TEXT);
  if (!rows.some(sealed)) return [...rows];
  await primeThreadKeys(
    db,
    rows.filter(sealed).map((r) => r.threadId),
  );
  return Promise.all(
    rows.map(async (row) =>
      sealed(row) ? { ...row, [column]: await openThreadText(db, row.threadId, row[column] as string) } : row,
    ),
  );
}

const SUBJECT_KEYS = `SELECT s.subject_id, k.master_key_id, k.wrapped, (e.subject_id IS NOT NULL) AS erased
  FROM unnest($1::text[]) AS s(subject_id)
  LEFT JOIN vault.subject_keys k ON k.subject_id = s.subject_id
  LEFT JOIN vault.erased_subjects e ON e.subject_id = s.subject_id`;

/** A key row as a {@link ThreadKey}: unwrapped, erased, or an error when the subject has neither. */
function keyOfRow(subjectId: string, row: KeyRow): Promise<ThreadKey> {
  if (row.wrapped && row.master_key_id) {
    return unwrapCached(row.master_key_id, Buffer.from(row.wrapped)).then((key) => ({ subjectId, key }));
  }
  if (row.erased) return Promise.resolve({ subjectId, erased: true as const });
  return Promise.reject(
    new AppError("internal:subject_key_missing", `Subject ${subjectId} has no key and no erasure on record.`),
  );
}

/**
 * Opens the records filed under these subjects (a page of orders, an account): their keys looked up in one statement
 * for this call — not kept by subject id, which names the same customer in every database a process may open (a key
 * unwrapped once is kept by its wrapped bytes, see `unwrapCached`). A subject with neither a key nor an erasure on
 * record is an error when one of its values is opened.
 */
export async function subjectOpener(
  db: KeySource,
  subjectIds: Iterable<string | null>,
): Promise<(subjectId: string | null, stored: string) => string> {
  const wanted = [...new Set([...subjectIds].filter((id): id is string => Boolean(id)))];
  const keys = new Map<string, ThreadKey>();
  if (wanted.length > 0) {
    const rows = await clientOf(db).query<KeyRow & { subject_id: string }>(
      SUBJECT_KEYS,
      [wanted],
      "vault_subject_keys",
    );
    for (const row of rows) {
      if (row.wrapped && row.master_key_id) {
        keys.set(row.subject_id, {
          subjectId: row.subject_id,
          key: await unwrapCached(row.master_key_id, Buffer.from(row.wrapped)),
        });
      } else if (row.erased) {
        keys.set(row.subject_id, { subjectId: row.subject_id, erased: true });
      }
    }
  }
  return (subjectId, stored) => {
    if (!stored.startsWith(SEALED_TEXT)) return stored;
    const key = subjectId ? keys.get(subjectId) : null;
    if (key === undefined) {
      throw new AppError(
        "internal:subject_key_missing",
        `Subject ${subjectId} has no key and no erasure on record.`,
      );
    }
    if (key === null || "erased" in key) return ERASED_TEXT;
    return openValue(
      key.key,
      key.subjectId,
      Buffer.from(stored.slice(SEALED_TEXT.length), "base64"),
    ).toString("utf8");
  };
}

/**
 * The sealer of a customer's records (the shop's orders and accounts) filed under `subjectId`, whose key the caller
 * just made or found: sealed once every live instance reads sealed records, in clear before (mid-rollout).
 */
export async function recordSealer(db: Queryable, subjectId: string): Promise<RowSealer | null> {
  const key = await ensureSubjectKey(db, subjectId);
  return ticketSealer(db, { subjectId, key });
}

/**
 * Which of these threads are of an erased subject (their key destroyed): nothing of them may be found any more —
 * not through an index row a backup taken before the erasure still holds.
 */
export async function erasedThreads(db: KeySource, threadIds: readonly string[]): Promise<Set<string>> {
  await primeThreadKeys(db, threadIds);
  const erased = new Set<string>();
  for (const id of threadIds) {
    const key = await readingKey(db, id);
    if (key !== null && "erased" in key) erased.add(id);
  }
  return erased;
}

/** Where a thread's key is looked up: a Drizzle handle (the caller's transaction) or a plain client. */
export type KeySource = Queryable | SqlClient;

function clientOf(db: KeySource): SqlClient {
  return "execute" in db && typeof db.execute === "function" ? sqlOn(db as Queryable) : (db as SqlClient);
}

/** The key to open `threadId`'s sealed values with (asked afresh when this process knew the thread without one). */
async function readingKey(db: KeySource, threadId: string): Promise<ThreadKey> {
  const client = clientOf(db);
  const key = await threadKey(client, threadId);
  // Sealed, though this process knew the thread without a subject: sealed since (`npm run keys -- seal`).
  return key ?? threadKey(client, threadId, { fresh: true });
}

export interface RewrapProgress {
  rewrapped: number;
  remaining: number;
}

/**
 * Re-wrap up to `batch` data keys that are not under the current master key (rotation: no data is rewritten). Each
 * batch is its own transaction; run it until `remaining` is 0. Safe to run on several instances at once.
 */
export async function rewrapKeys(db: AppDb, batch = 200): Promise<RewrapProgress> {
  const { service } = dataKeys();
  const current = await service.currentKeyId();
  const rewrapped = await db.transaction(async (tx) => {
    const rows = await tx
      .select()
      .from(subjectKeys)
      .where(ne(subjectKeys.masterKeyId, current))
      .limit(batch)
      .for("update", { skipLocked: true });
    for (const row of rows) {
      const key = await service.unwrap(row.masterKeyId, Buffer.from(row.wrapped));
      const next = await service.wrap(key);
      await tx
        .update(subjectKeys)
        .set({ masterKeyId: next.keyId, wrapped: next.wrapped, rewrappedAt: sql`now()` })
        .where(eq(subjectKeys.subjectId, row.subjectId));
    }
    return rows.length;
  });
  const [left] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(subjectKeys)
    .where(ne(subjectKeys.masterKeyId, current));
  forgetKeys();
  return { rewrapped, remaining: left?.n ?? 0 };
}

/** Data keys per master key id (for `keys:rotate` and health). */
export async function keysByMaster(db: Queryable): Promise<Record<string, number>> {
  const rows = await db
    .select({ id: subjectKeys.masterKeyId, n: sql<number>`count(*)::int` })
    .from(subjectKeys)
    .groupBy(subjectKeys.masterKeyId);
  return Object.fromEntries(rows.map((r) => [r.id, r.n]));
}
