import { openThreadJson, openThreadText, subjectOpener } from "@/lib/db/vault";
import { accountIdOf } from "@/lib/shop/authority-terms";
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

/** An order's customer (name and email), opened: they are sealed under the customer's key. */
export async function orderCustomer(
  sql: ReturnType<typeof sqlFor>,
  orderId: string,
): Promise<{ name: string; email: string } | undefined> {
  const [row] = await sql.rows<{ name: string; email: string; subject_id: string | null }>(
    "SELECT customer_name AS name, customer_email AS email, subject_id FROM orders WHERE id = $1",
    [orderId],
  );
  if (!row) return undefined;
  const open = await subjectOpener(sql, [row.subject_id]);
  return { name: open(row.subject_id, row.name), email: open(row.subject_id, row.email) };
}

/** A customer account's values by the email it is known by, opened (sealed under the customer's key). */
export async function customerAccount(
  sql: ReturnType<typeof sqlFor>,
  email: string,
): Promise<{ email: string; address: string | null; payout: string | null } | undefined> {
  const [row] = await sql.rows<{
    email: string;
    address: string | null;
    payout: string | null;
    subject_id: string | null;
  }>("SELECT email, address, payout, subject_id FROM customer_accounts WHERE id = $1", [accountIdOf(email)]);
  if (!row) return undefined;
  const open = await subjectOpener(sql, [row.subject_id]);
  const text = (value: string | null) => (value === null ? null : open(row.subject_id, value));
  return { email: open(row.subject_id, row.email), address: text(row.address), payout: text(row.payout) };
}
