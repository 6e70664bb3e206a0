import "server-only";
import { createHash } from "node:crypto";
import { readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Principal } from "@/lib/auth/roles";
import type { AppDb } from "@/lib/db/open";
import { eraseFromAuditTrail } from "@/lib/db/queries/audit";
import {
  findCustomerNames,
  listErasableColumns,
  listThreadsMentioning,
  redactColumn,
} from "@/lib/db/queries/erasure";
import { compactThreadEvents } from "@/lib/db/queries/events";
import { lockThread } from "@/lib/db/queries/threads";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";

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

/** Replace a customer's email and name(s) with placeholders everywhere (see the top of this file). */
export async function eraseCustomer({
  db,
  email,
  names = [],
  actor,
  archiveDir = env.RETENTION_ARCHIVE_DIR,
}: {
  db: AppDb;
  email: string;
  /** Spellings of the customer's name besides those on their orders. */
  names?: string[];
  actor: Pick<Principal, "id" | "label" | "role">;
  /** The archive folder whose files are rewritten too. */
  archiveDir?: string;
}): Promise<ErasureReport> {
  const address = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address) || address.length > 254) {
    throw new AppError("bad_request:erasure", "The customer's email address is not valid.");
  }
  const known = await findCustomerNames({ db, email: address });
  const allNames = [...new Set([...known, ...names].map((n) => n.trim()).filter((n) => n.length >= 3))];
  // Longest first, so "Anna Maria Schmidt" goes before "Anna Maria".
  allNames.sort((a, b) => b.length - a.length);
  const needles = [address, ...allNames];
  const replacements = [ERASED_EMAIL, ...allNames.map(() => ERASED_NAME)];
  const patterns = needles.map(literal);
  const jsonPatterns = needles.map((n) => literal(inJson(n)));
  const customerRef = createHash("sha256").update(address).digest("hex").slice(0, 16);

  const threadIds = await listThreadsMentioning({ db, jsonPatterns, email: address });
  for (const threadId of threadIds) {
    await db.transaction(async (tx) => {
      if (await lockThread({ tx, threadId })) await compactThreadEvents({ db: tx, threadId });
    });
  }
  const report = await db.transaction(async (tx) => {
    const rows: Record<string, number> = {};
    for (const column of await listErasableColumns({ db: tx })) {
      const changed = await redactColumn({ db: tx, column, patterns, jsonPatterns, replacements });
      if (changed > 0) rows[`${column.table}.${column.column}`] = changed;
    }
    const { erasureId, auditRows } = await eraseFromAuditTrail({
      db: tx,
      patterns,
      jsonPatterns,
      replacements,
      actor,
      detail: { customerRef, namesErased: allNames.length, threads: threadIds.length, rows },
    });
    return {
      erasureId,
      customerRef,
      namesErased: allNames.length,
      threads: threadIds.length,
      rows,
      auditRows,
    };
  });
  return { ...report, archiveLines: await eraseArchiveFiles(archiveDir, jsonPatterns, replacements) };
}
