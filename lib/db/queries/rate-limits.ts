import "server-only";
import { inArray, sql } from "drizzle-orm";
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
