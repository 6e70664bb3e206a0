import "server-only";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** A short ESM program: create (initdb) the data directory given as its argument, files private to this user. */
const INIT_PROGRAM = [
  "process.umask(0o077);",
  'const { PGlite } = await import("@electric-sql/pglite");',
  "const db = await PGlite.create(process.argv[1]);",
  "await db.close();",
].join(" ");

/**
 * PGlite creates a new data directory with initdb, a second WASM instance whose memory stays with the process that
 * ran it (~450 MB more resident than opening an existing directory, until the process exits). So a directory that
 * has never been initialized is initialized by a short-lived child process, and this process only ever opens an
 * existing one. Returns false when the child could not do it (the caller's open then runs initdb itself, as before).
 */
export async function initializeInChild(dataDir: string): Promise<boolean> {
  if (existsSync(join(dataDir, "PG_VERSION"))) return true;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", INIT_PROGRAM, dataDir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      if (stderr.length < 4_000) stderr += d;
    });
    child.on("error", () => resolve(false));
    child.on("exit", (code: number | null) => {
      const ok = code === 0 && existsSync(join(dataDir, "PG_VERSION"));
      if (!ok)
        console.error(`[db] initializing ${dataDir} in a child process failed (${code}): ${stderr.trim()}`);
      resolve(ok);
    });
  });
}
