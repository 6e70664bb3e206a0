import "server-only";
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AppError } from "@/lib/contract/errors";
import { env } from "@/lib/platform/env";
import { logger } from "@/lib/platform/observability/logger";
import { tightenTree, writePrivateFile } from "@/lib/platform/private-files";
import { singleton } from "@/lib/platform/singleton";

/*
 * Envelope encryption of personal data (DESIGN 19). Every data subject has a random data key (AES-256-GCM); the data
 * key is stored only wrapped by a master key, and a value under it is sealed as `iv | tag | ciphertext`. Destroying the
 * wrapped data key makes every value under it unreadable at once, wherever it was copied.
 *
 * The master key comes from, in order:
 * - KEY_SERVICE_URL: a key service wraps and unwraps (the master key never enters this process);
 * - DATA_MASTER_KEY (`id:base64`), with DATA_MASTER_KEYS_RETIRED still unwrapping during a rotation;
 * - DATA_KEYS_FILE: a file of `master=id:base64`, `retired=id:base64` and `index=base64` lines;
 * - otherwise, except a deployment (production with DATABASE_URL, which refuses to start): the file `data-keys`
 *   beside the embedded database's directory (or `.data/data-keys`), made once (0600) and named at start.
 * The index key (blind indexes: subject ids, search) is separate and never rotated: DATA_INDEX_KEY, or the file's.
 */

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface MasterKey {
  id: string;
  key: Buffer;
}

/** Wraps and unwraps data keys. A failure is 503 `unavailable:key_service`; nothing is written without a key. */
export interface KeyService {
  /** The id of the master key `wrap` uses now. */
  currentKeyId(): Promise<string>;
  wrap(dataKey: Buffer): Promise<{ keyId: string; wrapped: Buffer }>;
  unwrap(keyId: string, wrapped: Buffer): Promise<Buffer>;
  /** The ids of master keys it can still unwrap with (the current one first). */
  knownKeyIds(): Promise<string[]>;
}

export interface DataKeys {
  service: KeyService;
  indexKey: Buffer;
  /** Where the keys came from, for the start-up line (never the keys). */
  source: string;
}

/** Parse `id:base64` (a 32-byte key; id of 1–32 letters, digits, `-` or `_`). */
export function parseMasterKey(text: string, setting = "DATA_MASTER_KEY"): MasterKey {
  const trimmed = text.trim();
  const colon = trimmed.indexOf(":");
  const id = trimmed.slice(0, colon);
  const key = Buffer.from(trimmed.slice(colon + 1), "base64");
  if (colon <= 0 || !/^[A-Za-z0-9_-]{1,32}$/.test(id) || key.length !== KEY_BYTES) {
    throw new Error(
      `${setting}: a master key is id:key — an id of letters, digits, - or _ and 32 random bytes in base64 (openssl rand -base64 32)`,
    );
  }
  return { id, key };
}

function parseIndexKey(text: string, setting = "DATA_INDEX_KEY"): Buffer {
  const key = Buffer.from(text.trim(), "base64");
  if (key.length !== KEY_BYTES)
    throw new Error(`${setting}: 32 random bytes in base64 (openssl rand -base64 32)`);
  return key;
}

/**
 * Random IVs, handed out 12 bytes at a time from 4 KiB of the system's random bytes: a thread's run seals hundreds of
 * values, and asking the system for each IV was 40 % of sealing's CPU (npm run bench:keys, profiled). Each slice is
 * handed out once, so no IV repeats any more than with one call each.
 */
const ivPool = { bytes: Buffer.alloc(0), at: 0 };
function nextIv(): Buffer {
  if (ivPool.at + IV_BYTES > ivPool.bytes.length) {
    ivPool.bytes = randomBytes(4096);
    ivPool.at = 0;
  }
  const iv = ivPool.bytes.subarray(ivPool.at, ivPool.at + IV_BYTES);
  ivPool.at += IV_BYTES;
  return iv;
}

/** AES-256-GCM: `iv | tag | ciphertext`, bound to `aad` (a value sealed for one place does not open in another). */
export function seal(key: Buffer, plaintext: Buffer | Uint8Array, aad: string): Buffer {
  const iv = nextIv();
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The plaintext of a sealed value; throws when the key, the `aad` or a byte is wrong. */
export function open(key: Buffer, sealed: Buffer | Uint8Array, aad: string): Buffer {
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new Error("sealed value too short");
  const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

/** A new random data key. */
export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** Master keys held in this process: the first wraps, all unwrap. */
export function localKeyService(keys: MasterKey[]): KeyService {
  const [current] = keys;
  if (!current) throw new Error("data keys: no master key");
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  if (byId.size !== keys.length) throw new Error("data keys: a master key id is listed twice");
  return {
    currentKeyId: async () => current.id,
    knownKeyIds: async () => keys.map((k) => k.id),
    wrap: async (dataKey) => ({
      keyId: current.id,
      wrapped: seal(current.key, dataKey, `data-key:${current.id}`),
    }),
    unwrap: async (keyId, wrapped) => {
      const key = byId.get(keyId);
      if (!key) {
        throw new AppError(
          "unavailable:key_service",
          `A data key is wrapped by master key "${keyId}", which this server does not hold (retired too early?).`,
        );
      }
      return open(key, wrapped, `data-key:${keyId}`);
    },
  };
}

/**
 * A key service over HTTP: `POST {url}/wrap {key}` → `{keyId, wrapped}`, `POST {url}/unwrap {keyId, wrapped}` →
 * `{key}`, `GET {url}/keys` → `{current, known}` (bytes in base64). Any failure is 503 `unavailable:key_service`.
 */
export function httpKeyService(url: string, timeoutMs = 5_000): KeyService {
  const base = url.replace(/\/+$/, "");
  const call = async <T>(path: string, body?: unknown): Promise<T> => {
    try {
      const res = await fetch(`${base}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: body === undefined ? undefined : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new Error(`answered ${res.status}`);
      return (await res.json()) as T;
    } catch (error) {
      throw new AppError(
        "unavailable:key_service",
        `The key service did not answer (${(error as Error).message}): nothing was written.`,
      );
    }
  };
  const bytes = (value: unknown, what: string) => {
    if (typeof value !== "string" || value === "")
      throw new AppError("unavailable:key_service", `The key service answered without ${what}.`);
    return Buffer.from(value, "base64");
  };
  return {
    currentKeyId: async () => (await call<{ current: string }>("/keys")).current,
    knownKeyIds: async () => (await call<{ known: string[] }>("/keys")).known,
    wrap: async (dataKey) => {
      const out = await call<{ keyId?: string; wrapped?: string }>("/wrap", {
        key: dataKey.toString("base64"),
      });
      if (typeof out.keyId !== "string")
        throw new AppError("unavailable:key_service", "The key service answered without a key id.");
      return { keyId: out.keyId, wrapped: bytes(out.wrapped, "the wrapped key") };
    },
    unwrap: async (keyId, wrapped) => {
      const out = await call<{ key?: string }>("/unwrap", { keyId, wrapped: wrapped.toString("base64") });
      const key = bytes(out.key, "the key");
      if (key.length !== KEY_BYTES)
        throw new AppError("unavailable:key_service", "The key service answered a key of the wrong size.");
      return key;
    },
  };
}

/** The file the embedded default (and a non-production server on Postgres) keeps its keys in. */
export function defaultKeysFile(): string {
  const dir =
    env.DATABASE_URL || env.PGLITE_DATA_DIR.startsWith("memory://") ? ".data" : dirname(env.PGLITE_DATA_DIR);
  return resolve(join(dir, "data-keys"));
}

/** Text of a new keys file: a random master key (id `k` + date) and a random index key. */
export function newKeysFileText(now = new Date()): string {
  const id = `k${now.toISOString().slice(0, 10).replaceAll("-", "")}`;
  return `master=${id}:${randomBytes(KEY_BYTES).toString("base64")}\nindex=${randomBytes(KEY_BYTES).toString("base64")}\n`;
}

interface KeysFile {
  master: MasterKey;
  retired: MasterKey[];
  index: Buffer;
}

export function parseKeysFile(text: string, path: string): KeysFile {
  let master: MasterKey | undefined;
  let index: Buffer | undefined;
  const retired: MasterKey[] = [];
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    const name = line.slice(0, eq);
    const value = line.slice(eq + 1);
    if (name === "master") master = parseMasterKey(value, path);
    else if (name === "retired") retired.push(parseMasterKey(value, path));
    else if (name === "index") index = parseIndexKey(value, path);
    else throw new Error(`${path}: unknown line "${name}" (master=, retired=, index=)`);
  }
  if (!master || !index) throw new Error(`${path}: needs a master= and an index= line`);
  return { master, retired, index };
}

/** Read the keys file at `path`, making it first (0600, exclusive: two processes starting at once agree) if `create`. */
function readKeysFile(path: string, create: boolean): KeysFile {
  if (!existsSync(path)) {
    if (!create) throw new Error(`DATA_KEYS_FILE: ${path} does not exist`);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      writePrivateFile(path, newKeysFileText(), { exclusive: true });
      logger().info(
        { path },
        "data keys: made a master key and an index key (back the file up apart from the data)",
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  tightenTree(path);
  return parseKeysFile(readFileSync(path, "utf8"), path);
}

function readDataKeys(): DataKeys {
  const deployment = Boolean(env.DATABASE_URL) && env.NODE_ENV === "production";
  const needFile = !env.DATA_INDEX_KEY || !(env.DATA_MASTER_KEY || env.KEY_SERVICE_URL);
  const file = env.DATA_KEYS_FILE
    ? readKeysFile(resolve(env.DATA_KEYS_FILE), false)
    : needFile && !deployment
      ? readKeysFile(defaultKeysFile(), true)
      : undefined;
  const indexKey = env.DATA_INDEX_KEY ? parseIndexKey(env.DATA_INDEX_KEY) : file?.index;
  if (!indexKey) {
    throw new Error(
      "DATA_INDEX_KEY (or DATA_KEYS_FILE) is required with DATABASE_URL in production: personal data is kept under keys.",
    );
  }
  if (env.KEY_SERVICE_URL)
    return { service: httpKeyService(env.KEY_SERVICE_URL), indexKey, source: "key service" };
  const retired = env.DATA_MASTER_KEYS_RETIRED
    ? env.DATA_MASTER_KEYS_RETIRED.split(",")
        .filter((p) => p.trim())
        .map((p) => parseMasterKey(p, "DATA_MASTER_KEYS_RETIRED"))
    : [];
  if (env.DATA_MASTER_KEY) {
    return {
      service: localKeyService([parseMasterKey(env.DATA_MASTER_KEY), ...retired]),
      indexKey,
      source: "DATA_MASTER_KEY",
    };
  }
  if (!file) {
    throw new Error(
      "DATA_MASTER_KEY (or DATA_KEYS_FILE, or KEY_SERVICE_URL) is required with DATABASE_URL in production: personal data is kept under keys.",
    );
  }
  return {
    service: localKeyService([file.master, ...file.retired, ...retired]),
    indexKey,
    source: env.DATA_KEYS_FILE ? "DATA_KEYS_FILE" : defaultKeysFile(),
  };
}

/** This process's data keys (read once; a deployment without a master key throws here, at start). */
export function dataKeys(): DataKeys {
  return singleton("data-keys", readDataKeys);
}

/** A blind index of `text` under the index key: 32 hex characters, the same for the same text everywhere. */
export function blindIndex(kind: string, text: string): string {
  return createHmac("sha256", dataKeys().indexKey)
    .update(`${kind}\u0000${text}`, "utf8")
    .digest("hex")
    .slice(0, 32);
}
