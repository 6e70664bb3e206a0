import { z } from "zod";

/*
 * Bounded building blocks for query strings and bodies: every number, date, id and text a request may carry has a
 * range Postgres can hold, so hostile input gets a 400/422 naming the field instead of a database error.
 * Isomorphic (the inbox page parses its query with the same schemas).
 */

/** Largest value of a Postgres `integer` column (amounts in cents are stored as integer). */
export const PG_INT_MAX = 2_147_483_647;

/** An amount in minor units (cents) from a query string: digits only, within a Postgres integer. */
export const centsParam = z
  .string()
  .regex(/^\d{1,10}$/, "must be a whole number of cents (e.g. 25000 for 250.00)")
  .transform(Number)
  .pipe(z.number().max(PG_INT_MAX, `must be at most ${PG_INT_MAX}`));

/** A page size from a query string. */
export function limitParam(max: number, fallback: number) {
  return z
    .string()
    .regex(/^\d{1,4}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().min(1, "must be at least 1").max(max, `must be at most ${max}`))
    .default(fallback);
}

const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59);

/** A date or date-time in ISO 8601 (`2026-11-30` or `2026-11-30T10:00:00Z`), between 1970 and 9999. */
export const isoDateParam = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?$/,
    "must be an ISO date such as 2026-11-30 or 2026-11-30T10:00:00Z",
  )
  .transform((v) => new Date(v))
  .refine((d) => !Number.isNaN(d.getTime()), "is not a real date")
  .refine((d) => d.getTime() >= EARLIEST && d.getTime() <= LATEST, "must be between 1970 and 9999");

/** A keyset position that is a row id (a positive safe integer). */
export const idCursorParam = z
  .string()
  .regex(/^\d{1,15}$/, "must be the nextBefore of a previous page")
  .transform(Number)
  .pipe(z.number().int().min(1, "must be the nextBefore of a previous page"));

/** A duration like `90s`, `15m`, `2h`, `3d`, up to ten years, in seconds. */
const DURATION_UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
export const durationParam = z
  .string()
  .regex(/^\d{1,9}[smhd]$/, "must be a duration like 90s, 15m, 2h or 3d")
  .transform((v) => Number(v.slice(0, -1)) * DURATION_UNITS[v.slice(-1) as keyof typeof DURATION_UNITS])
  .pipe(z.number().max(10 * 365 * 86_400, "must be at most ten years (3650d)"));

// biome-ignore lint/suspicious/noControlCharactersInRegex: ids with control characters are refused
const PLAUSIBLE_ID = /^[^\u0000-\u001f\u007f]{1,200}$/;

/** Whether a string can be one of our ids (1–200 characters, no control characters): anything else names nothing. */
export function isPlausibleId(value: string): boolean {
  return PLAUSIBLE_ID.test(value);
}
