import "server-only";
import { AppError } from "@/lib/contract/errors";
import type { InboxStatus } from "@/lib/contract/wire";

/*
 * The inbox's keyset cursor: base64url JSON of the last row's key (its listing, its timestamp with Postgres's
 * microseconds, its id), checked before it reaches SQL.
 */

export interface CursorKey {
  /** The listing the cursor belongs to (a status). */
  m: InboxStatus;
  /** Timestamp of the last row (ISO, microseconds). */
  t: string;
  /** Id of the last row (interrupt id or thread id). */
  i: string;
}

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

// biome-ignore lint/suspicious/noControlCharactersInRegex: a tampered cursor's id must not reach Postgres with one
const CURSOR_ID = /^[^\u0000-\u001f\u007f]{1,200}$/;

/** A tampered cursor can carry a well-formed but impossible time (month 13, year 0): Postgres would refuse it. */
function isRealInstant(iso: string): boolean {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms) || ms < Date.UTC(1970, 0, 1) || ms > Date.UTC(9999, 11, 31)) return false;
  return new Date(ms).toISOString().slice(0, 19) === iso.slice(0, 19);
}

export function encodeInboxCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

/** Decode a cursor of listing `mode`, or throw `bad_request:inbox`. */
export function decodeInboxCursor(cursor: string, mode: InboxStatus): CursorKey {
  let key: Partial<CursorKey> | undefined;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    key = undefined;
  }
  if (
    !key ||
    typeof key !== "object" ||
    typeof key.t !== "string" ||
    !ISO_MICROS.test(key.t) ||
    !isRealInstant(key.t) ||
    typeof key.i !== "string" ||
    !CURSOR_ID.test(key.i)
  ) {
    throw new AppError(
      "bad_request:inbox",
      "cursor is not valid: pass back the nextCursor of a previous page.",
    );
  }
  if (key.m !== mode) {
    throw new AppError(
      "bad_request:inbox",
      `cursor belongs to the status=${String(key.m)} listing, not status=${mode}.`,
    );
  }
  return { m: mode, t: key.t, i: key.i };
}
