import "server-only";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { env } from "@/lib/platform/env";
import { tightenTree, writePrivateFile } from "@/lib/platform/private-files";

/**
 * The key that signs session cookies. From BETTER_AUTH_SECRET when set. Otherwise, on the embedded database, a
 * random one generated once and kept (mode 0600) beside the data directory, so sessions survive a restart and
 * nothing secret is ever in the code. With DATABASE_URL in production there is no safe default: start-up fails.
 */
export function authSecret(): string {
  if (env.BETTER_AUTH_SECRET) return env.BETTER_AUTH_SECRET;
  if (env.DATABASE_URL) {
    if (env.NODE_ENV === "production") {
      throw new Error(
        "BETTER_AUTH_SECRET is required with DATABASE_URL (32+ random characters, the same on every instance).",
      );
    }
    console.warn("[auth] BETTER_AUTH_SECRET is not set: sessions last only as long as this process.");
    return randomBytes(32).toString("base64url");
  }
  if (env.PGLITE_DATA_DIR.startsWith("memory://")) return randomBytes(32).toString("base64url");
  const file = join(dirname(env.PGLITE_DATA_DIR), "auth-secret");
  if (existsSync(file)) {
    tightenTree(file);
    return readFileSync(file, "utf8").trim();
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString("base64url");
  writePrivateFile(file, secret, { exclusive: true });
  return secret;
}
