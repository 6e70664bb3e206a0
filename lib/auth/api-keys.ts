import "server-only";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { and, desc, eq, isNull } from "drizzle-orm";
import { AppError } from "@/lib/contract/errors";
import { recordAudit } from "@/lib/db/queries/audit";
import { type ApiKey, apiKeys } from "@/lib/db/schema";
import type { Queryable } from "@/lib/db/tx";
import type { Principal } from "../contract/roles";
import { cachedCredential, invalidateSessions } from "./session-cache";

/** Keys look like `hitl_<43 base64url characters>`: 256 random bits. */
const KEY_PREFIX = "hitl_";

function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export type ApiKeyView = Omit<ApiKey, "keyHash">;

function view({ keyHash: _hash, ...rest }: ApiKey): ApiKeyView {
  return rest;
}

/** Issue an intake key. The key itself is returned once and never stored or logged; only its hash is kept. */
export async function issueApiKey({
  db,
  name,
  by,
}: {
  db: Queryable;
  name: string;
  by: Principal;
}): Promise<{ key: string; apiKey: ApiKeyView }> {
  const key = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  // The key and its audit entry in one transaction: no key is ever issued without its record.
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(apiKeys)
      .values({
        id: randomUUID(),
        name,
        prefix: key.slice(0, KEY_PREFIX.length + 6),
        keyHash: hashKey(key),
        scope: "intake",
        createdBy: by.id,
      })
      .returning();
    if (!row) throw new Error("api key insert returned nothing");
    await recordAudit({
      db: tx,
      entries: [{ action: "key_issued", actor: by, detail: { keyId: row.id, name } }],
    });
    return { key, apiKey: view(row) };
  });
}

/** Revoke a key; it is refused from the next request on. */
export async function revokeApiKey({
  db,
  keyId,
  by,
}: {
  db: Queryable;
  keyId: string;
  by: Principal;
}): Promise<ApiKeyView> {
  const revoked = await db.transaction(async (tx) => {
    const [row] = await tx
      .update(apiKeys)
      .set({ revokedAt: new Date(), revokedBy: by.id })
      .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
      .returning();
    if (!row) {
      const [existing] = await tx.select().from(apiKeys).where(eq(apiKeys.id, keyId));
      if (!existing) throw new AppError("not_found:api_key", `API key ${keyId} does not exist.`);
      return view(existing);
    }
    await recordAudit({
      db: tx,
      entries: [{ action: "key_revoked", actor: by, detail: { keyId, name: row.name } }],
    });
    return view(row);
  });
  // Committed: this process forgets cached keys at once (other processes hear the NOTIFY of migration 0018).
  invalidateSessions();
  return revoked;
}

export async function listApiKeys({ db }: { db: Queryable }): Promise<ApiKeyView[]> {
  return (await db.select().from(apiKeys).orderBy(desc(apiKeys.createdAt))).map(view);
}

/**
 * The principal of a presented key, or an error: unknown and revoked keys are both 401. A verified key is cached
 * briefly like a session (session-cache.ts): revoking or deleting a key NOTIFYs `hitl_auth` (migration 0018), so a
 * revocation still takes effect within a second on every server. `last_used_at` is written when the key is verified
 * from the database: at most once per cache lifetime (5 s) per server while the key is in use.
 */
export async function principalForKey({ db, key }: { db: Queryable; key: string }): Promise<Principal> {
  if (!key.startsWith(KEY_PREFIX)) {
    throw new AppError("unauthorized:api_key", "The API key is not valid.");
  }
  const keyHash = hashKey(key);
  const principal = await cachedCredential<Principal>(`key:${keyHash}`, async () => {
    const [row] = await db
      .update(apiKeys)
      .set({ lastUsedAt: new Date() })
      .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id, name: apiKeys.name });
    return row
      ? { value: { kind: "key", id: `key:${row.id}`, label: `key ${row.name}`, role: null, scope: "intake" } }
      : null;
  });
  if (!principal) throw new AppError("unauthorized:api_key", "The API key is not valid or has been revoked.");
  return principal;
}
