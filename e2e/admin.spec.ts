import pg from "pg";
import { expect, seriousViolations, storageStatePath, test } from "./fixtures";
import { lateOrders, suiteDatabaseUrl } from "./support/queue";

/*
 * The admin page: adding an operator, issuing an intake key (shown once) that then files a ticket, revoking it, and
 * every change landing in the audit trail.
 */
test.use({ storageState: storageStatePath("admin") });

test("an admin adds a user, issues an intake key that works, and revokes it", async ({ page }) => {
  await page.goto("/admin");
  await expect(page.getByTestId("admin-console")).toHaveAttribute("data-ready", "true");

  const email = `new-${Date.now()}@e2e.local`;
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Name", { exact: true }).fill("New Operator");
  await page.getByLabel("Role", { exact: true }).selectOption("operator");
  await page.getByLabel("Password").fill("a-long-enough-password");
  await page.getByTestId("create-user").click();
  const row = page.locator(`[data-testid="admin-user"][data-email="${email}"]`);
  await expect(row).toBeVisible();
  await expect(row.getByLabel(`Role of ${email}`)).toHaveValue("operator");

  const keyName = `shop-${Date.now()}`;
  await page.getByLabel("Key name").fill(keyName);
  await page.getByTestId("issue-key").click();
  const key = (await page.getByTestId("issued-key-value").textContent())?.trim() ?? "";
  expect(key).toMatch(/^hitl_/);
  // One click copies it (shown once, so copying it by hand is where mistakes happen).
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByTestId("copy-key").click();
  await expect(page.getByTestId("copy-key")).toHaveText("Copied");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
  const filed = await page.request.post("/api/threads", {
    headers: { authorization: `Bearer ${key}` },
    data: { message: "Refund ORD-1002 please" },
  });
  expect(filed.status()).toBe(201);

  const keyRow = page.locator(`[data-testid="admin-key"][data-name="${keyName}"]`);
  await keyRow.getByRole("button", { name: `Revoke ${keyName}` }).click();
  await expect(keyRow.getByTestId("key-revoked")).toBeVisible();
  const refused = await page.request.post("/api/threads", {
    headers: { authorization: `Bearer ${key}` },
    data: { message: "Refund ORD-1002 please" },
  });
  expect(refused.status()).toBe(401);

  await page.goto("/audit?action=key_revoked");
  await expect(page.getByTestId("audit-entry").first()).toContainText(keyName);
  expect(await seriousViolations(page)).toEqual([]);
});

test("an admin previews the retention policy and erases a customer; the erasure is audited", async ({
  page,
}) => {
  await page.goto("/admin");
  await expect(page.getByTestId("admin-console")).toHaveAttribute("data-ready", "true");
  const panel = page.getByTestId("retention-panel");
  await expect(panel).toContainText("keep the last 3 checkpoints");
  await panel.getByRole("button", { name: "Preview" }).click();
  await expect(page.getByTestId("retention-report")).toContainText("Would change:");
  await expect(page.getByTestId("retention-report")).toContainText("Archive:");

  // Erasure is by subject: a customer with an order — one of this test's own (no other spec uses ORD-7900), so no
  // other spec's customer is erased; the order is removed again at the end (the new-ticket form counts the shop's).
  const [order] = await lateOrders(7900, 1, 3900);
  await page.getByLabel("Customer email").fill(`${order!.toLowerCase()}@queue.example.com`);
  await page.getByRole("button", { name: "Erase customer data" }).click();
  await expect(page.getByTestId("erasure-report")).toContainText("Erased customer");
  await page.goto("/audit?action=erasure");
  await expect(page.getByTestId("audit-entry").first()).toContainText("erasure");
  const client = new pg.Client({ connectionString: suiteDatabaseUrl() });
  await client.connect();
  try {
    await client.query("DELETE FROM orders WHERE id = $1", [order]);
  } finally {
    await client.end();
  }
});

test("the admin page has no serious accessibility violations", async ({ page }) => {
  await page.goto("/admin");
  await expect(page.getByTestId("admin-console")).toHaveAttribute("data-ready", "true");
  expect(await seriousViolations(page)).toEqual([]);
});

test.describe("below admin", () => {
  test.use({ storageState: storageStatePath("supervisor") });

  test("a supervisor has no Admin link and the page sends them away", async ({ page }) => {
    await page.goto("/");
    await expect(page.getByRole("link", { name: "Admin" })).toHaveCount(0);
    await page.goto("/admin");
    await expect(page).toHaveURL(/\/not-allowed\?need=admin/);
    await expect(page.getByTestId("not-allowed")).toContainText("That page needs the admin role.");
    expect((await page.request.get("/api/admin/users")).status()).toBe(403);
  });
});

test("the admin's header is one row at 1280 px: every link, the search box and the account side by side", async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/admin");
  const row = page.getByTestId("header-row");
  const tops = await row.evaluate((el) =>
    [...el.children]
      .filter((c) => (c as HTMLElement).offsetParent !== null)
      .map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2)),
  );
  expect(tops.length).toBeGreaterThanOrEqual(4);
  expect(Math.max(...tops) - Math.min(...tops)).toBeLessThanOrEqual(4);
  await expect(page.getByRole("navigation", { name: "Main", exact: true }).getByRole("link")).toHaveCount(5);
});
