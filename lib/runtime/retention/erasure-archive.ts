import "server-only";
import { readdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Redactor } from "./redact";

/*
 * Erasure in the retention archive (RETENTION_ARCHIVE_DIR): the archived threads of a subject, rewritten as their rows
 * are in the database (lib/runtime/retention/erasure.ts) — whole words, JSON string values only.
 */

/**
 * Rewrite the subject's lines in every `.jsonl` file of the archive folder (a line per archived thread: the subject's
 * when its thread is one of theirs or was about one of their orders), each file through a temporary file and a rename.
 * The saver's JSON values inside a line (`blobText`) are rewritten as JSON too. Returns the lines changed; a missing
 * folder has none.
 */
export async function eraseArchiveFiles(
  dir: string,
  threadIds: Set<string>,
  orderIds: Set<string>,
  redactor: Redactor,
): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let changed = 0;
  for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
    const path = join(dir, name);
    const lines = (await readFile(path, "utf8")).split("\n");
    let touched = false;
    const out = lines.map((line) => {
      if (line.trim() === "") return line;
      const archived = JSON.parse(line) as Record<string, unknown>;
      const thread = archived.thread as { order_ref?: string | null; context_order?: string | null } | null;
      const ours =
        threadIds.has(String(archived.threadId)) ||
        orderIds.has(thread?.order_ref ?? "") ||
        orderIds.has(thread?.context_order ?? "");
      if (!ours) return line;
      const next = redactArchived(archived, redactor);
      if (next === archived) return line;
      changed += 1;
      touched = true;
      return JSON.stringify(next);
    });
    if (!touched) continue;
    const temporary = `${path}.erasure-${process.pid}`;
    await writeFile(temporary, out.join("\n"), { mode: 0o600 });
    await rename(temporary, path);
  }
  return changed;
}

/** An archived thread with its values redacted (the same object when nothing matched); `blobText` as JSON. */
function redactArchived(archived: Record<string, unknown>, redactor: Redactor): Record<string, unknown> {
  let changed = false;
  const blobs = (list: unknown) =>
    Array.isArray(list)
      ? list.map((b: Record<string, unknown>) => {
          if (typeof b.blobText !== "string") return b;
          const parsed = JSON.parse(b.blobText) as unknown;
          const next = redactor.json(parsed);
          if (next === parsed) return b;
          changed = true;
          return { ...b, blobText: JSON.stringify(next) };
        })
      : list;
  const { checkpointBlobs, checkpointWrites, ...rest } = archived;
  const next = redactor.json(rest);
  if (next !== rest) changed = true;
  const blobRows = blobs(checkpointBlobs);
  const writeRows = blobs(checkpointWrites);
  return changed ? { ...next, checkpointBlobs: blobRows, checkpointWrites: writeRows } : archived;
}

/**
 * Delete the customer's emails the simulated mail wrote as files (`<effect id>.eml` in `directory`, the embedded
 * default's outbox): they hold their address and words in clear. Returns how many were there.
 */
export async function eraseMailFiles(directory: string, effectIds: readonly string[]): Promise<number> {
  let deleted = 0;
  for (const id of effectIds) {
    if (!/^[A-Za-z0-9-]{1,100}$/.test(id)) continue;
    try {
      await unlink(join(directory, `${id}.eml`));
      deleted += 1;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return deleted;
}
