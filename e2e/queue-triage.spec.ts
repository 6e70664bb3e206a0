import type { Page } from "@playwright/test";
import { createTicket, expect, pausedThread, runOverApi, test } from "./fixtures";
import { inboxRow, lateOrders, openLiveInbox } from "./support/queue";

/*
 * Bulk decisions and keyboard triage. Each test's items have an amount no other test uses, so an amount filter shows
 * exactly them.
 */

/** A late refund request on `order` filed and started by the signed-in user (who may then not approve it). */
async function ownThread(page: Page, order: string): Promise<string> {
  const message = `Please refund ${order}, it arrived broken.`;
  const threadId = await createTicket(page, message, order);
  // Filed with the intake key above; started by the signed-in supervisor: four-eyes bars them from approving.
  await runOverApi(page, threadId, {
    messages: [{ id: crypto.randomUUID(), role: "user", content: message }],
  });
  return threadId;
}

test("bulk approve of 20 items where 3 are refused by four-eyes: 17 done / 3 refused with reasons", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const orders = await lateOrders(7200, 20, 4217);
  const threads: string[] = [];
  for (const [i, order] of orders.entries()) {
    threads.push(
      i < 3
        ? await ownThread(page, order)
        : await pausedThread(page, `The thing from ${order} broke. Refund please.`, { orderRef: order }),
    );
  }
  await openLiveInbox(page, "action=refund_approval&minAmount=4217&maxAmount=4217&limit=50");
  await expect(page.getByTestId("inbox-row")).toHaveCount(20);
  // The inbox marks, before any click, the three this supervisor may not approve (they started them).
  await expect(page.getByTestId("not-yours")).toHaveCount(3);
  for (const threadId of threads.slice(0, 3)) {
    await expect(inboxRow(page, threadId).getByTestId("not-yours")).toHaveAttribute(
      "data-code",
      /^forbidden:four_eyes/,
    );
  }
  for (const threadId of threads) await inboxRow(page, threadId).getByTestId("row-select").check();
  await expect(page.getByTestId("bulk-count")).toHaveText("20 selected");
  await page.getByTestId("bulk-approve").click();
  await page.getByTestId("bulk-note").fill("Late, but within goodwill.");
  await page.getByTestId("bulk-confirm-button").click();

  await expect(page.getByTestId("bulk-result")).toContainText("17 done / 3 refused", { timeout: 60_000 });
  const refused = page.getByTestId("bulk-refused-item");
  await expect(refused).toHaveCount(3);
  for (const item of await refused.all()) {
    await expect(item).toHaveAttribute("data-code", /^forbidden:four_eyes/);
  }
  // What was approved leaves the list; the three refused stay.
  await expect(page.getByTestId("inbox-row")).toHaveCount(3);
  for (const threadId of threads.slice(0, 3)) await expect(inboxRow(page, threadId)).toBeVisible();
});

test("keyboard-only triage of 10 items: j/k move, x selects, a approves after confirming", async ({
  page,
}) => {
  test.setTimeout(120_000);
  const orders = await lateOrders(7300, 10, 3713);
  for (const order of orders) await pausedThread(page, `Refund ${order}: it broke.`, { orderRef: order });
  await openLiveInbox(page, "action=refund_approval&minAmount=3713&maxAmount=3713&limit=50");
  await expect(page.getByTestId("inbox-row")).toHaveCount(10);

  // Down to the last row and back up to the first, then select all ten on the way down.
  for (let i = 0; i < 10; i++) await page.keyboard.press("j");
  await expect(page.getByTestId("inbox-row").nth(9)).toHaveAttribute("data-active", "true");
  for (let i = 0; i < 9; i++) await page.keyboard.press("k");
  await expect(page.getByTestId("inbox-row").nth(0)).toHaveAttribute("data-active", "true");
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press("x");
    await page.keyboard.press("j");
  }
  await expect(page.getByTestId("bulk-count")).toHaveText("10 selected");
  await expect(page.locator('[data-testid="inbox-row"][data-selected="true"]')).toHaveCount(10);

  // r asks for a reason (the note field has focus); Escape backs out; a asks to confirm, Enter confirms.
  await page.keyboard.press("r");
  await expect(page.getByTestId("bulk-note")).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("bulk-confirm")).toHaveCount(0);
  await page.keyboard.press("a");
  await expect(page.getByTestId("bulk-confirm-button")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("bulk-result")).toContainText("10 done / 0 refused", { timeout: 60_000 });
  await expect(page.getByTestId("inbox-row")).toHaveCount(0);
});
