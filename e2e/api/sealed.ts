import { openThreadJson, openThreadText } from "@/lib/db/vault";
import type { sqlFor } from "./client";

/**
 * The bodies of a thread's emails in the outbox, opened: they are stored sealed under the thread's subject key, which
 * a test process can open (the tests and their servers share the master key). Not for Playwright specs (the vault is
 * server code).
 */
export async function emailBodies(sql: ReturnType<typeof sqlFor>, threadId: string): Promise<string[]> {
  const rows = await sql.rows<{ body: string }>(
    "SELECT body FROM outbox WHERE thread_id = $1 ORDER BY created_at",
    [threadId],
  );
  return Promise.all(rows.map((r) => openThreadText(sql, threadId, r.body)));
}

/**
 * How many logged events are the custom event `name` — of one run, or of every run (the log is sealed: opened here to
 * be read).
 */
export async function countCustomEvents(
  sql: ReturnType<typeof sqlFor>,
  name: string,
  runId?: string,
): Promise<number> {
  const rows = await sql.rows<{ thread_id: string; event: unknown }>(
    "SELECT thread_id, event FROM events WHERE ($1::text IS NULL OR run_id = $1) AND type = 'CUSTOM'",
    [runId ?? null],
  );
  let n = 0;
  for (const row of rows) {
    const event = (await openThreadJson(sql, row.thread_id, row.event)) as { name?: unknown };
    if (event.name === name) n += 1;
  }
  return n;
}
