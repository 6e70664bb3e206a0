import "server-only";
import { createHash, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { env } from "@/lib/platform/env";
import { tightenTree, writePrivateFile } from "@/lib/platform/private-files";
import { singleton } from "@/lib/platform/singleton";

/*
 * The keys that sign decision receipts (lib/runtime/runs/receipts.ts) and key the digests of values receipts must not hold
 * in clear (a new payout account). `RECEIPT_KEYS` lists them as `id:secret` pairs separated by commas: the first
 * signs, every one verifies — rotation is putting a new key first and keeping the old ones until no receipt needs
 * them checked. Unset, one key is derived from the session secret (BETTER_AUTH_SECRET; on the embedded database, the
 * generated one kept beside the data directory). Nothing secret is in the code or logged.
 */

export interface ReceiptKey {
  id: string;
  secret: Buffer;
}

export interface ReceiptKeys {
  signing: ReceiptKey;
  byId: ReadonlyMap<string, ReceiptKey>;
}

/** Parse `RECEIPT_KEYS` (`id:secret,id:secret`): ids are 1–32 letters, digits, `-` or `_`; secrets 32+ characters. */
export function parseReceiptKeys(text: string): ReceiptKey[] {
  const keys = text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const colon = part.indexOf(":");
      const id = part.slice(0, colon);
      const secret = part.slice(colon + 1);
      if (colon <= 0 || !/^[A-Za-z0-9_-]{1,32}$/.test(id) || secret.length < 32) {
        throw new Error(
          "RECEIPT_KEYS: each key is id:secret (id of letters, digits, - or _; secret of 32+ characters)",
        );
      }
      return { id, secret: Buffer.from(secret, "utf8") };
    });
  if (new Set(keys.map((k) => k.id)).size !== keys.length)
    throw new Error("RECEIPT_KEYS: a key id is listed twice");
  return keys;
}

/**
 * The secret the default key derives from: BETTER_AUTH_SECRET when set; in production with DATABASE_URL nothing else
 * will do (every instance must sign alike); otherwise a random one generated once and kept (0600) beside the data
 * directory — the embedded database's session secret, or one of its own next to it — so a restart, a second process
 * and `npm run receipts -- verify` all read the same. An in-memory database gets one for the process alone.
 */
function baseSecret(): string {
  if (env.BETTER_AUTH_SECRET) return env.BETTER_AUTH_SECRET;
  if (env.DATABASE_URL && env.NODE_ENV === "production") {
    throw new Error(
      "RECEIPT_KEYS (or BETTER_AUTH_SECRET) is required with DATABASE_URL: receipts are signed with it.",
    );
  }
  if (!env.DATABASE_URL && env.PGLITE_DATA_DIR.startsWith("memory://"))
    return randomBytes(32).toString("base64url");
  const dir = env.PGLITE_DATA_DIR.startsWith("memory://") ? ".data" : dirname(env.PGLITE_DATA_DIR);
  const file = join(dir, env.DATABASE_URL ? "receipt-secret" : "auth-secret");
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    try {
      writePrivateFile(file, randomBytes(32).toString("base64url"), { exclusive: true });
    } catch (error) {
      // Another process made it a moment ago: read theirs.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  tightenTree(file);
  return readFileSync(file, "utf8").trim();
}

/** This process's receipt keys (read once). */
export function receiptKeys(): ReceiptKeys {
  return singleton("receipt-keys", readReceiptKeys);
}

function readReceiptKeys(): ReceiptKeys {
  let list: ReceiptKey[];
  if (env.RECEIPT_KEYS) {
    list = parseReceiptKeys(env.RECEIPT_KEYS);
  } else {
    const base = baseSecret();
    const secret = Buffer.from(hkdfSync("sha256", base, "hitl-console", "decision receipts", 32));
    // The id names the derivation without revealing it: a changed session secret is a new key.
    const id = `derived-${createHash("sha256").update(secret).digest("hex").slice(0, 8)}`;
    list = [{ id, secret }];
  }
  const [signing] = list;
  if (!signing) throw new Error("RECEIPT_KEYS: no key");
  return { signing, byId: new Map(list.map((k) => [k.id, k])) };
}

/** HMAC-SHA256 (hex) of `text` under the key `keyId` (the signing key when omitted); null for a key this process lacks. */
export function receiptHmac(text: string, keyId?: string): string | null {
  const keys = receiptKeys();
  const key = keyId ? keys.byId.get(keyId) : keys.signing;
  return key ? createHmac("sha256", key.secret).update(text, "utf8").digest("hex") : null;
}
