import { openThreadText } from "@/lib/db/vault";
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
