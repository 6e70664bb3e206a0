import "server-only";
import { randomUUID } from "node:crypto";
import { eq, inArray, sql } from "drizzle-orm";
import { rowsOf } from "@/lib/db/rows";
import { authRateLimits } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";

/**
 * Give back one request of a rate-limit bucket (better-auth's per-address counters): a successful sign-in is not an
 * attempt to guess a password, so it must not count towards locking its address out. Never below zero.
 */
export async function forgiveRateLimitedRequest({
  db,
  keys,
}: {
  db: Queryable;
  keys: string[];
}): Promise<void> {
  if (keys.length === 0) return;
  await db
    .update(authRateLimits)
    .set({ count: sql`GREATEST(${authRateLimits.count} - 1, 0)` })
    .where(inArray(authRateLimits.key, keys));
}

/** The longest window {@link takeRateLimitedRequest} may use: better-auth prunes rows idle longer than its own. */
export const RATE_LIMIT_MAX_WINDOW_MS = 60_000;

/**
 * Count one request of `key` against a fixed window of `windowMs` holding at most `max` requests, in the table
 * better-auth keeps its limits in (`auth_rate_limits`; our keys never look like its `<address>|<path>`). The row's
 * `last_request` is the start of its current window here. One statement: concurrent requests of one key are counted
 * one at a time (the row's lock), and a refused one changes nothing; inside a transaction, the count is given back if
 * the transaction rolls back. better-auth deletes rows older than its longest window (60 s) — by then a window of at
 * most {@link RATE_LIMIT_MAX_WINDOW_MS} is over anyway, so that deletion is the same as a new window.
 */
export async function takeRateLimitedRequest({
  db,
  key,
  windowMs,
  max,
  now = Date.now(),
}: {
  db: Queryable;
  key: string;
  windowMs: number;
  max: number;
  now?: number;
}): Promise<{ allowed: true } | { allowed: false; retryAfterMs: number }> {
  if (windowMs > RATE_LIMIT_MAX_WINDOW_MS)
    throw new Error(`a rate-limit window of ${windowMs} ms is too long`);
  const expired = now - windowMs;
  const taken = await db.execute(sql`INSERT INTO auth_rate_limits AS r (id, key, count, last_request)
    VALUES (${randomUUID()}, ${key}, 1, ${now}::bigint)
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN r.last_request <= ${expired}::bigint THEN 1 ELSE r.count + 1 END,
      last_request = CASE WHEN r.last_request <= ${expired}::bigint THEN ${now}::bigint ELSE r.last_request END
    WHERE r.last_request <= ${expired}::bigint OR r.count < ${max}::int
    RETURNING r.count`);
  if (rowsOf(taken).length > 0) return { allowed: true };
  const [row] = await db
    .select({ windowStart: authRateLimits.lastRequest })
    .from(authRateLimits)
    .where(eq(authRateLimits.key, key));
  return { allowed: false, retryAfterMs: Math.max(0, Number(row?.windowStart ?? now) + windowMs - now) };
}
