import "server-only";
import { createHash } from "node:crypto";
import { readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Principal } from "@/lib/auth/roles";
import type { AppDb } from "@/lib/db/open";
import { eraseFromAuditTrail } from "@/lib/db/queries/audit";
import {
  type ErasableColumn,
  findCustomerNames,
  isStaffEmail,
  listErasableColumns,
  listThreadsMentioning,
  redactColumn,
} from "@/lib/db/queries/erasure";
import { compactThreadEvents } from "@/lib/db/queries/events";
import { lockThread } from "@/lib/db/queries/threads";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { RUN_KINDS, THREAD_STATUSES } from "@/lib/wire";
import { agentOfThread } from "./graph";

/*
 * Erasure of a customer's personal data (a right-to-erasure request): their email address and their name (as the
 * shop's orders know it, plus any spelling given) are replaced by placeholders everywhere the database holds them —
 * threads, runs, decisions, events, checkpoints (channel values and pending writes are the saver's JSON bytes,
 * rewritten as JSON), effects, outbox, refunds, orders — in one transaction, and in the audit trail through its one
 * audited exception, the database function `audit_log_erase` (role `audit_eraser`), which appends the `erasure` entry
 * first; the trail's hash chain still verifies afterwards. The placeholders keep every thread readable.
 *
 * A streamed reply holds the name split across token chunks: the event logs of the customer's finished runs are
 * compacted first (one event per message), so the name is whole where it is matched. The archive's JSON lines files
 * (RETENTION_ARCHIVE_DIR) are rewritten too, after the database commits. Not reached: staff accounts (auth_*), mail
 * files under MAIL_DIR, and the tokens of a run still streaming.
 */

export const ERASED_NAME = "[erased customer]";
export const ERASED_EMAIL = "erased@erased.invalid";

export interface ErasureReport {
  /** The audit entry that records the erasure. */
  erasureId: number;
  /** First 16 hex characters of sha256(email): how the audit entry names the customer. */
  customerRef: string;
  namesErased: number;
  threads: number;
  /** Rows changed per `table.column`. */
  rows: Record<string, number>;
  auditRows: number;
  /** Archive lines rewritten (in the archive folder of this instance). */
  archiveLines: number;
}

/**
 * Rewrite the patterns in every `.jsonl` file of the archive folder (JSON text: the JSON patterns), each through a
 * temporary file and a rename. Returns the lines changed; a missing folder has none.
 */
async function eraseArchiveFiles(
  dir: string,
  jsonPatterns: string[],
  replacements: string[],
): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const regexes = jsonPatterns.map((p) => new RegExp(p, "gi"));
  let changed = 0;
  for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
    const path = join(dir, name);
    const lines = (await readFile(path, "utf8")).split("\n");
    let touched = false;
    const out = lines.map((line) => {
      let next = line;
      regexes.forEach((re, i) => {
        next = next.replace(re, () => replacements[i]!);
      });
      if (next !== line) {
        changed += 1;
        touched = true;
      }
      return next;
    });
    if (!touched) continue;
    const temporary = `${path}.erasure-${process.pid}`;
    await writeFile(temporary, out.join("\n"), { mode: 0o600 });
    await rename(temporary, path);
  }
  return changed;
}

/** A case-insensitive regular expression (Postgres ARE) matching `text` literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** How `text` appears inside JSON text (quotes, backslashes and control characters escaped). */
function inJson(text: string): string {
  return JSON.stringify(text).slice(1, -1);
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
  /** Say what would change (rows per column, threads, values) and change nothing. */
  preview?: boolean;
}

/**
 * Erase one customer's personal data, by subject: the customer must exist (their email is on the shop's orders), a
 * staff account is refused, an extra name must be a spelling of theirs. Their email and names become placeholders
 * everywhere, and in their threads the values their agents declare personal (`personalData`: the customer's words,
 * an IBAN, an address) do too — never in a protected column (ids, statuses, answers, amounts, who decided). See the
 * top of this file for where. `preview` reports the same and rolls back.
 */
export async function eraseCustomer(request: ErasureRequest): Promise<ErasureReport & { preview: boolean }> {
  const { db, actor, archiveDir = env.RETENTION_ARCHIVE_DIR, preview = false } = request;
  const subject = await resolveSubject(request);
  const { address, allNames, threadIds } = subject;
  const needles = [address, ...allNames];
  const replacements = [ERASED_EMAIL, ...allNames.map(() => ERASED_NAME)];
  const patterns = needles.map(literal);
  const jsonPatterns = needles.map((n) => literal(inJson(n)));
  const customerRef = createHash("sha256").update(address).digest("hex").slice(0, 16);
  const values = await personalValues(db, threadIds, needles);

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
      const rows: Record<string, number> = {};
      const count = (column: ErasableColumn, n: number) => {
        if (n > 0)
          rows[`${column.table}.${column.column}`] = (rows[`${column.table}.${column.column}`] ?? 0) + n;
      };
      const columns = await listErasableColumns({ db: tx });
      for (const column of columns) {
        count(column, await redactColumn({ db: tx, column, patterns, jsonPatterns, replacements }));
      }
      // The declared personal values, in the subject's own threads only.
      if (values.length > 0 && threadIds.length > 0) {
        for (const column of columns.filter((c) => c.threadColumn)) {
          count(
            column,
            await redactColumn({
              db: tx,
              column,
              patterns: values.map(literal),
              jsonPatterns: values.map((v) => literal(inJson(v))),
              replacements: values.map(() => ERASED_VALUE),
              threadIds,
            }),
          );
        }
      }
      const audit = [...needles, ...values];
      const { erasureId, auditRows } = await eraseFromAuditTrail({
        db: tx,
        patterns: audit.map(literal),
        jsonPatterns: audit.map((n) => literal(inJson(n))),
        replacements: [...replacements, ...values.map(() => ERASED_VALUE)],
        actor,
        detail: {
          customerRef,
          namesErased: allNames.length,
          valuesErased: values.length,
          threads: threadIds.length,
          rows,
        },
      });
      report = {
        erasureId,
        customerRef,
        namesErased: allNames.length,
        threads: threadIds.length,
        rows,
        auditRows,
        archiveLines: 0,
      };
      if (preview) throw PREVIEW;
    })
    .catch((error: unknown) => {
      if (error !== PREVIEW) throw error;
    });
  if (!report) throw new Error("erasure: no report");
  if (preview) return { ...report, erasureId: 0, preview: true };
  const archiveLines = await eraseArchiveFiles(
    archiveDir,
    [...needles.map((n) => literal(inJson(n))), ...values.map((v) => literal(inJson(v)))],
    [...replacements, ...values.map(() => ERASED_VALUE)],
  );
  return { ...report, archiveLines, preview: false };
}

const PREVIEW = Symbol("erasure preview");

/** The customer an erasure names, or a refusal that writes nothing. */
async function resolveSubject({ db, email, names = [] }: ErasureRequest) {
  const address = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address) || address.length > 254) {
    throw new AppError("bad_request:erasure", "The customer's email address is not valid.");
  }
  if (await isStaffEmail({ db, email: address })) {
    throw new AppError(
      "unprocessable:erasure_staff",
      "That address is a staff account's: erasure is for customers (who decided what stays in the ledger).",
      { fields: ["email"] },
    );
  }
  const known = await findCustomerNames({ db, email: address });
  if (known.length === 0) {
    throw new AppError("not_found:customer", "No customer has that email address on an order.", {
      fields: ["email"],
    });
  }
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
  // Longest first, so "Anna Maria Schmidt" goes before "Anna Maria".
  allNames.sort((a, b) => b.length - a.length);
  const jsonPatterns = [address, ...allNames].map((n) => literal(inJson(n)));
  const threadIds = await listThreadsMentioning({ db, jsonPatterns, email: address });
  return { address, allNames, threadIds };
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
