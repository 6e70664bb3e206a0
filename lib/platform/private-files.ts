import "server-only";
import { chmodSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/*
 * Files only this server's user may read: the embedded database, the generated auth secret, the demo password.
 * Directories 0700, files 0600, whatever the process umask was.
 */

/** Create `dir` (and missing parents) as 0700; an existing `dir` is set to 0700 too. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Write a new file as 0600 (its directory made private first); an existing file is refused (`wx`) if `exclusive`. */
export function writePrivateFile(path: string, content: string, { exclusive = false } = {}): void {
  writeFileSync(path, content, { mode: 0o600, flag: exclusive ? "wx" : "w" });
  chmodSync(path, 0o600);
}

/** Make everything under `root` private: directories 0700, files 0600 (symlinks are left alone). */
export function tightenTree(root: string): void {
  const stat = lstatSync(root, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink()) return;
  if (!stat.isDirectory()) {
    if ((stat.mode & 0o777) !== 0o600) chmodSync(root, 0o600);
    return;
  }
  if ((stat.mode & 0o777) !== 0o700) chmodSync(root, 0o700);
  for (const entry of readdirSync(root)) tightenTree(join(root, entry));
}

/**
 * Run `create` with umask 077, so whatever it creates is private from the start. Worker threads cannot change the
 * umask; there the caller's tightenTree afterwards is what protects the files.
 */
export async function withPrivateUmask<T>(create: () => Promise<T>): Promise<T> {
  let previous: number | undefined;
  try {
    previous = process.umask(0o077);
  } catch {
    previous = undefined;
  }
  try {
    return await create();
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}
