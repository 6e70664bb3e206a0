import "server-only";
import { singleton } from "@/lib/platform/singleton";
import type { SessionUser } from "../contract/roles";

/**
 * Verified sessions, briefly, in this process: a signed-in request whose cookies were verified a moment ago skips
 * better-auth's session and user lookups (two statements and the cookie's signature check per request).
 *
 * Revocation is pushed: every change to `auth_sessions` or `auth_users` (sign-out, a session revoked, a user
 * disabled or given another role, by the app, the CLI or plain SQL) fires a trigger that NOTIFYs `hitl_auth`, and the
 * event listener empties the cache when it hears it — milliseconds after the commit. The cache only serves while the
 * listener holds its connection (it is switched off the moment the connection drops, and emptied when it comes
 * back), so a revocation is never missed for want of a listener; on embedded PGlite the process hears its own
 * NOTIFYs (it is the database's only client: `listenEmbedded`). An
 * entry also lapses after `TTL_MS` and at the session's own expiry, and a lookup that was under way while the cache
 * was emptied is not stored (it may have read the row before the change).
 */

/** Channel the auth tables' triggers notify on (migration 0016). */
export const AUTH_CHANNEL = "hitl_auth";

const TTL_MS = 5_000;
const MAX_ENTRIES = 2_000;

interface Entry {
  /** A session's user, or an API key's principal. */
  value: unknown;
  until: number;
}

interface CacheState {
  live: boolean;
  generation: number;
  entries: Map<string, Entry>;
}

/** Process-wide: the listener (started by instrumentation.ts) and the routes that read the cache are bundled apart. */
function state(): CacheState {
  return singleton<CacheState>("session-cache", () => ({ live: false, generation: 0, entries: new Map() }));
}

/** Forget every cached session (a revocation was announced, or announcements may have been missed). */
export function invalidateSessions(): void {
  const s = state();
  s.generation += 1;
  s.entries.clear();
}

/** The listener reports whether it hears `hitl_auth`: the cache serves only while it does. */
export function setSessionCacheLive(live: boolean): void {
  const s = state();
  invalidateSessions();
  s.live = live;
}

/**
 * The user of this cookie header: from the cache when verified less than `TTL_MS` ago and nothing was revoked since,
 * otherwise from `lookup` (better-auth), whose answer is kept when it is a user.
 */
export async function cachedSessionUser(
  cookie: string | null,
  lookup: () => Promise<{ user: SessionUser; expiresAt: Date } | null>,
): Promise<SessionUser | null> {
  // better-auth finds a session only in the cookie (no bearer or header plugin is configured): no cookie, no session,
  // and an anonymous request costs no lookup.
  if (!cookie) return null;
  const found = await cachedCredential(`cookie:${cookie}`, async () => {
    const session = await lookup();
    return session ? { value: session.user, expiresAt: session.expiresAt } : null;
  });
  return found as SessionUser | null;
}

/**
 * A verified credential's answer (a session's user, an API key's principal), under `key`: from the cache when
 * verified less than `TTL_MS` ago and nothing was revoked since, otherwise from `lookup`, whose answer is kept (until
 * `expiresAt` at the latest) when it is not null. Revocations of either kind NOTIFY `hitl_auth` (migrations 0017 and
 * 0018), which empties the whole cache.
 */
export async function cachedCredential<T>(
  key: string,
  lookup: () => Promise<{ value: T; expiresAt?: Date } | null>,
): Promise<T | null> {
  const s = state();
  if (!s.live) return (await lookup())?.value ?? null;
  const now = Date.now();
  const hit = s.entries.get(key);
  if (hit && hit.until > now) return hit.value as T;
  if (hit) s.entries.delete(key);
  const generation = s.generation;
  const found = await lookup();
  if (found && s.live && s.generation === generation) {
    if (s.entries.size >= MAX_ENTRIES) s.entries.delete(s.entries.keys().next().value as string);
    s.entries.set(key, {
      value: found.value,
      until: Math.min(now + TTL_MS, found.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY),
    });
  }
  return found?.value ?? null;
}
