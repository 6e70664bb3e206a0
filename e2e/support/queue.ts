import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, expect, type Page } from "@playwright/test";
import pg from "pg";
import { authDir, type E2eRole, storageStatePath } from "../auth/users";

/** The suite server's database (written by scripts/e2e-server.mjs). */
export function suiteDatabaseUrl(): string {
  const file = join(authDir(), "database-url.txt");
  if (!existsSync(file)) throw new Error("no database-url.txt: run through playwright.config.ts");
  return readFileSync(file, "utf8").trim();
}

/**
 * Orders `ORD-<first>` … for `count` orders of `cents` each, placed 45 days ago: a refund request on one is late,
 * so the refund agent asks a person (below the four-eyes limit: any operator may approve it).
 */
export async function lateOrders(first: number, count: number, cents: number): Promise<string[]> {
  // On the embedded database the suite server seeded them before it started (e2e/support/embedded/seed.sql).
  if (process.env.E2E_DATABASE === "pglite")
    return Array.from({ length: count }, (_, i) => `ORD-${first + i}`);
  const client = new pg.Client({ connectionString: suiteDatabaseUrl() });
  await client.connect();
  try {
    const ids = Array.from({ length: count }, (_, i) => `ORD-${first + i}`);
    await client.query(
      `INSERT INTO orders (id, customer_name, customer_email, amount_cents, currency, placed_at, payment_method, items, status)
       SELECT id, 'Queue Customer ' || id, lower(id) || '@queue.example.com', $2, 'EUR', now() - interval '45 days',
         'card', jsonb_build_array(jsonb_build_object('sku', 'Q-1', 'name', 'Queue item', 'quantity', 1, 'unitCents', $2::int)),
         'delivered'
       FROM unnest($1::text[]) AS id
       ON CONFLICT (id) DO NOTHING`,
      [ids, cents],
    );
    await client.query("DELETE FROM refunds WHERE order_id = ANY($1::text[])", [ids]);
    return ids;
  } finally {
    await client.end();
  }
}

/** A second signed-in browser context (another operator at another desk). */
export async function pageAs(browser: Browser, role: E2eRole): Promise<Page> {
  const context = await browser.newContext({ storageState: storageStatePath(role) });
  return context.newPage();
}

export const inboxRow = (page: Page, threadId: string) =>
  page.locator(`[data-testid="inbox-row"][data-thread-id="${threadId}"]`);

/** Open the inbox and wait until it is hydrated and following the live stream. */
export async function openLiveInbox(page: Page, search = "limit=200") {
  await page.goto(`/?${search}`);
  await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("live-status")).toHaveAttribute("data-mode", "stream");
}
