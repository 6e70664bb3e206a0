import "server-only";
import { createHash } from "node:crypto";
import { AppError } from "@/lib/contract/errors";
import type { Principal } from "@/lib/contract/roles";
import { RUN_KINDS, THREAD_STATUSES } from "@/lib/contract/wire";
import type { AppDb } from "@/lib/db/open";
import { eraseAuditRows, findErasure, listAuditOfThreads } from "@/lib/db/queries/audit";
import {
  deleteThreadSearch,
  findCustomerOrders,
  forgetOrderIndex,
  listActiveThreads,
  listErasableSubjects,
  listOrphanThreadsNaming,
  listSubjectRows,
  listSubjectThreads,
  listThreadEmailEffects,
  PERSONAL_COLUMNS,
  type PersonalTable,
  type SubjectKeys,
  type SubjectRow,
  updateSubjectRow,
} from "@/lib/db/queries/erasure";
import { compactThreadEvents } from "@/lib/db/queries/events";
import { lockThread } from "@/lib/db/queries/threads";
import type { Tx } from "@/lib/db/tx";
import { customerSubjectId, destroySubjectKeys, isSealedJson, SEALED, SEALED_TEXT } from "@/lib/db/vault";
import { env } from "@/lib/platform/env";
import { accountIdOf } from "@/lib/shop/accounts";
import { agentOfThread } from "../agents/registry";
import { eraseArchiveFiles, eraseMailFiles } from "./erasure-archive";
import { makeRedactor, type Redactor } from "./redact";

/*
 * Erasure of a customer's personal data (a right-to-erasure request), by subject. The subject is a customer the shop
 * knows by email (their orders); their rows are found by keys, never by searching text: the threads about their
 * orders (and archived ones the ledger ties to them, and ticket-only threads naming their address), their orders and
 * their account. In those rows only, and only in the columns declared personal (lib/db/queries/erasure.ts), their
 * email, their names and the values their agents declare personal become placeholders — as whole words, inside JSON
 * string values only (lib/runtime/retention/redact.ts) — and the audit trail's rows of their threads through its one audited
 * exception, `audit_log_erase_rows` (never who did what). No other customer's row, no staff member's, no JSON key and
 * no checkpoint's structure is ever rewritten; a value it cannot read (a saver blob that is not JSON) and that holds
 * the subject is refused with a code, as is a thread whose run is still going.
 *
 * A streamed reply holds the name split across token chunks: the event logs of the subject's finished runs are
 * compacted first (one event per message), so the name is whole where it is matched. The archive's JSON lines of the
 * subject's threads (RETENTION_ARCHIVE_DIR) are rewritten too, after the database commits. Not reached: mail files
 * under MAIL_DIR.
 */

export const ERASED_NAME = "[erased customer]";
export const ERASED_EMAIL = "erased@erased.invalid";

export interface ErasureReport {
  /** The audit entry that records the erasure. */
  erasureId: number;
  /**
   * How the audit entry names the customer: their subject id, a keyed blind index of the email (lib/db/vault.ts) —
   * opaque without the index key, unlike a plain hash of the address, which anyone can test a guess against.
   */
  customerRef: string;
  namesErased: number;
  threads: number;
  /** The subject's data keys destroyed (theirs and their threads' own): what they sealed is unreadable. */
  keysDestroyed: number;
  /** Rows changed per `table.column`. */
  rows: Record<string, number>;
  auditRows: number;
  /** Archive lines rewritten (in the archive folder of this instance). */
  archiveLines: number;
  /** Emails to the customer written as files by the simulated mail (`MAIL_DIR` of this instance), deleted. */
  mailFiles?: number;
  /** The customer was erased before (this request found nothing left and changed nothing). */
  alreadyErased?: boolean;
}

/** The placeholder of a value an agent declared personal (an IBAN, an address, the customer's own words). */
export const ERASED_VALUE = "[erased]";

/** Words of the product's own vocabulary: never a name to erase (an erasure of "approve" emptied every answer). */
const VOCABULARY = new Set([
  ...THREAD_STATUSES,
  ...RUN_KINDS,
  "approve",
  "approved",
  "approve_partial",
  "reject",
  "rejected",
  "send",
  "send_edited",
  "dont_send",
  "grant",
  "decline",
  "pending",
  "resolved",
  "cancelled",
  "superseded",
  "delivered",
  "queued",
  "failed",
  "refund",
  "payment",
  "email",
  "operator",
  "supervisor",
  "admin",
  "viewer",
  "system",
]);

const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3);

export interface ErasureRequest {
  db: AppDb;
  email: string;
  /** Spellings of the customer's name besides those on their orders: each must share a word with a known one. */
  names?: string[];
  actor: Pick<Principal, "id" | "label" | "role">;
  /** The archive folder whose files are rewritten too. */
  archiveDir?: string;
  /** The simulated mail's folder (one `.eml` per email, by effect id): the customer's emails there are deleted. */
  mailDir?: string;
  /** Say what would change (rows per column, threads, values) and change nothing. */
  preview?: boolean;
}

/**
 * Erase one customer's personal data, by subject (see the top of this file). The customer must exist (their email is
 * on the shop's orders) or have been erased before (then nothing changes: `alreadyErased`); an extra name must be a
 * spelling of theirs. `preview` reports the same and rolls back.
 */
export async function eraseCustomer(request: ErasureRequest): Promise<ErasureReport & { preview: boolean }> {
  const {
    db,
    actor,
    archiveDir = env.RETENTION_ARCHIVE_DIR,
    mailDir = env.MAIL_DIR,
    preview = false,
  } = request;
  const address = normalizeEmail(request.email);
  const customerRef = customerSubjectId(address);
  const subject = await resolveSubject(request, address);
  if (!subject) {
    // Erasures recorded before named the customer by the first 16 hex characters of sha256(email).
    const legacyRef = createHash("sha256").update(address).digest("hex").slice(0, 16);
    const before = await findErasure({ db, customerRefs: [customerRef, legacyRef] });
    if (!before) {
      throw new AppError("not_found:customer", "No customer has that email address on an order.", {
        fields: ["email"],
      });
    }
    return {
      erasureId: before.id,
      customerRef,
      namesErased: 0,
      threads: 0,
      keysDestroyed: 0,
      rows: {},
      auditRows: 0,
      archiveLines: 0,
      alreadyErased: true,
      preview,
    };
  }
  const { allNames, orderIds } = subject;
  const nameRedactor = makeRedactor([
    { text: address, replacement: ERASED_EMAIL },
    ...allNames.map((text) => ({ text, replacement: ERASED_NAME })),
  ]);
  const subjectId = customerSubjectId(address);
  const threadIds = await subjectThreads(db, address, subjectId, orderIds, nameRedactor);
  const active = await listActiveThreads({ db, threadIds });
  if (active.length > 0) {
    throw new AppError(
      "conflict:erasure_running",
      `${active.length} of this customer's threads ${active.length === 1 ? "has" : "have"} a run in progress (${active.slice(0, 3).join(", ")}): erase once ${active.length === 1 ? "it pauses or ends" : "they pause or end"}, or stop ${active.length === 1 ? "it" : "them"} first.`,
      { fields: ["email"] },
    );
  }
  const values = await personalValues(db, threadIds, [address, ...allNames.map((n) => n.toLowerCase())]);
  const redactor = makeRedactor([
    { text: address, replacement: ERASED_EMAIL },
    ...allNames.map((text) => ({ text, replacement: ERASED_NAME })),
    ...values.map((text) => ({ text, replacement: ERASED_VALUE })),
  ]);
  const keys: SubjectKeys = { email: address, accountId: accountIdOf(address), threadIds, orderIds };

  if (!preview) {
    for (const threadId of threadIds) {
      await db.transaction(async (tx) => {
        if (await lockThread({ tx, threadId })) await compactThreadEvents({ db: tx, threadId });
      });
    }
  }
  let report: ErasureReport | undefined;
  await db
    .transaction(async (tx) => {
      report = await eraseRows(tx, {
        keys,
        subjectId,
        redactor,
        actor,
        customerRef,
        names: allNames.length,
        values: values.length,
      });
      if (preview) throw PREVIEW;
    })
    .catch((error: unknown) => {
      if (error !== PREVIEW) throw error;
    });
  if (!report) throw new Error("erasure: no report");
  if (preview) return { ...report, erasureId: 0, preview: true };
  const archiveLines = await eraseArchiveFiles(archiveDir, new Set(threadIds), new Set(orderIds), redactor);
  const mailFiles = await eraseMailFiles(mailDir, await listThreadEmailEffects({ db, threadIds }));
  return { ...report, archiveLines, mailFiles, preview: false };
}

const PREVIEW = Symbol("erasure preview");

/**
 * In one transaction: each declared personal column of the subject's rows rewritten (row by row, only those that
 * change), then the audit trail's rows of their threads through its one audited exception, which records the erasure.
 */
async function eraseRows(
  tx: Tx,
  {
    keys,
    subjectId,
    redactor,
    actor,
    customerRef,
    names,
    values,
  }: {
    keys: SubjectKeys;
    subjectId: string;
    redactor: Redactor;
    actor: ErasureRequest["actor"];
    customerRef: string;
    names: number;
    values: number;
  },
): Promise<ErasureReport> {
  const rows: Record<string, number> = {};
  for (const table of PERSONAL_COLUMNS) {
    for (const row of await listSubjectRows({ db: tx, table, keys })) {
      const changes = redactRow(table, row, redactor);
      const changed = Object.keys(changes);
      if (changed.length === 0) continue;
      await updateSubjectRow({ db: tx, table, ctid: row.ctid, changes });
      for (const column of changed) {
        const key = `${table.table}.${column}`;
        rows[key] = (rows[key] ?? 0) + 1;
      }
    }
  }
  // The words of their sealed tickets, as a blind index: deleted (the tickets themselves go with their keys).
  const indexed = await deleteThreadSearch({ db: tx, threadIds: keys.threadIds });
  if (indexed > 0) rows["thread_search.terms"] = indexed;
  const orderIndex = await forgetOrderIndex({ db: tx, orderIds: keys.orderIds });
  if (orderIndex.names > 0) rows["order_names.terms"] = orderIndex.names;
  if (orderIndex.subjects > 0) rows["orders.subject_id"] = orderIndex.subjects;
  const auditChanges = (await listAuditOfThreads({ db: tx, threadIds: keys.threadIds })).flatMap((row) => {
    const changed: Record<string, unknown> = {};
    for (const field of ["payload", "answer", "detail"] as const) {
      // Sealed under the thread's key: erased with it, never rewritten (the trail keeps its digest).
      if (isSealedJson(row[field])) continue;
      const next = redactor.json(row[field]);
      if (next !== row[field]) changed[field] = next;
    }
    return Object.keys(changed).length > 0 ? [{ id: row.id, ...changed }] : [];
  });
  const { erasureId, auditRows } = await eraseAuditRows({
    db: tx,
    threadIds: keys.threadIds,
    rows: auditChanges,
    actor,
    detail: { customerRef, namesErased: names, valuesErased: values, threads: keys.threadIds.length, rows },
  });
  // What is sealed under the subject's keys (their threads' checkpoints and writes) is erased by destroying them.
  const subjects = await listErasableSubjects({ db: tx, subjectId, threadIds: keys.threadIds });
  const keysDestroyed = await destroySubjectKeys(tx, subjects, String(erasureId));
  return {
    keysDestroyed,
    erasureId,
    customerRef,
    namesErased: names,
    threads: keys.threadIds.length,
    rows,
    auditRows,
    archiveLines: 0,
  };
}

/** A saver blob's types that hold no value. */
const NO_VALUE = new Set([null, "empty", "null", "undefined"]);

/**
 * The changed personal columns of one of the subject's rows (nothing when nothing matched). A saver blob is JSON when
 * its type says so and is rewritten as JSON; one in any other encoding that holds the subject is refused.
 */
function redactRow(table: PersonalTable, row: SubjectRow, redactor: Redactor): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const { column, kind } of table.columns) {
    const value = row.values[column];
    if (value === null || value === undefined) continue;
    // Sealed under the subject's key (an input, an effect's payload, an email): erased with the key, never rewritten.
    if (isSealedJson(value) || (typeof value === "string" && value.startsWith(SEALED_TEXT))) continue;
    if (kind === "text") {
      const next = redactor.text(value as string);
      if (next !== value) changes[column] = next;
    } else if (kind === "jsonb") {
      const next = redactor.json(value);
      if (next !== value) changes[column] = next;
    } else {
      const bytes = value as Buffer;
      if (NO_VALUE.has(row.type ?? null)) continue;
      // Sealed under the subject's key: erased with the key, never rewritten.
      if (row.type?.startsWith(SEALED)) continue;
      if (row.type !== "json") {
        if (redactor.matches(bytes.toString("utf8")) || redactor.matches(bytes.toString("latin1"))) {
          throw new AppError(
            "unprocessable:erasure_unreadable",
            `A value of this customer's in ${table.table} is stored as "${row.type}", which erasure cannot rewrite without reading it as JSON: nothing was erased.`,
          );
        }
        continue;
      }
      const parsed = JSON.parse(bytes.toString("utf8")) as unknown;
      const next = redactor.json(parsed);
      if (next !== parsed) changes[column] = Buffer.from(JSON.stringify(next), "utf8");
    }
  }
  return changes;
}

function normalizeEmail(email: string): string {
  const address = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address) || address.length > 254) {
    throw new AppError("bad_request:erasure", "The customer's email address is not valid.", {
      fields: ["email"],
    });
  }
  return address;
}

/** The customer an erasure names (null: no order has that address), or a refusal that writes nothing. */
async function resolveSubject({ db, names = [] }: ErasureRequest, address: string) {
  const { names: known, orderIds } = await findCustomerOrders({ db, email: address });
  if (orderIds.length === 0) return null;
  const knownWords = new Set(known.flatMap(words));
  for (const name of names) {
    const own = words(name);
    if (own.length === 0 || own.every((w) => VOCABULARY.has(w)) || !own.some((w) => knownWords.has(w))) {
      throw new AppError(
        "unprocessable:erasure_name",
        `"${name.slice(0, 60)}" is not a spelling of this customer's name (${known.join(", ")}): an extra name must share a word with it.`,
        { fields: ["name"] },
      );
    }
  }
  const allNames = [...new Set([...known, ...names].map((n) => n.trim()).filter((n) => n.length >= 3))];
  return { allNames, orderIds };
}

/** The subject's threads: by their orders (see listSubjectThreads), and ticket-only threads naming their address. */
async function subjectThreads(
  db: AppDb,
  address: string,
  subjectId: string,
  orderIds: string[],
  identity: Redactor,
): Promise<string[]> {
  const byKeys = await listSubjectThreads({ db, email: address, orderIds, subjectId });
  const orphans = (await listOrphanThreadsNaming({ db, email: address }))
    .filter((t) => identity.matches(t.text))
    .map((t) => t.id);
  return [...new Set([...byKeys, ...orphans])].sort();
}

/**
 * The values the subject's agents declare personal (`AgentDefinition.personalData`, paths into their state), read
 * from each of the subject's threads' current state: strings of 4 characters or more that are not the product's
 * vocabulary (longest first).
 */
async function personalValues(db: AppDb, threadIds: string[], already: string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const threadId of threadIds) {
    const { agent, graph } = await agentOfThread({ db, threadId, read: true }).catch(() => ({
      agent: null,
      graph: null,
    }));
    if (!agent || !graph || !agent.personalData?.length) continue;
    const values = ((await graph.getState({ configurable: { thread_id: threadId } })).values ?? {}) as Record<
      string,
      unknown
    >;
    for (const path of agent.personalData) {
      const value = path
        .split(".")
        .reduce<unknown>((v, key) => (v as Record<string, unknown> | null)?.[key], values);
      if (
        typeof value === "string" &&
        value.trim().length >= 4 &&
        !VOCABULARY.has(value.trim().toLowerCase())
      )
        found.add(value.trim());
    }
  }
  return [...found].filter((v) => !already.includes(v.toLowerCase())).sort((a, b) => b.length - a.length);
}
