import pg from "pg";
import { expect, pausedThread, test, threadState } from "./fixtures";
import { inboxRow, lateOrders, openLiveInbox, suiteDatabaseUrl } from "./support/queue";

/*
 * Approving from the inbox shows the facts (issue 55): each row carries its question's policy findings (the fraud
 * flag, the late request) as the thread page would, the keyboard confirmation names them per item, and an order the
 * fraud screening flagged is never approved by `a Enter` alone — the confirmation needs its second, explicit step.
 */

const CENTS = 3947;

/** Two late orders of CENTS, the second flagged by fraud screening. */
async function orders(): Promise<[string, string]> {
  const [plain, flagged] = (await lateOrders(7810, 2, CENTS)) as [string, string];
  const client = new pg.Client({ connectionString: suiteDatabaseUrl() });
  await client.connect();
  try {
    await client.query("UPDATE orders SET flagged = (id = $1) WHERE id = ANY($2::text[])", [
      flagged,
      [plain, flagged],
    ]);
  } finally {
    await client.end();
  }
  return [plain, flagged];
}

test("the inbox row names the policy findings, the heading counts the queue, and a flagged refund needs a second, explicit key to approve", async ({
  page,
}) => {
  test.setTimeout(120_000);
  const [plain, flagged] = await orders();
  const plainThread = await pausedThread(page, `Refund ${plain}: it broke.`, { orderRef: plain });
  const flaggedThread = await pausedThread(page, `Refund ${flagged}: it broke.`, { orderRef: flagged });
  await openLiveInbox(page, `action=refund_approval&minAmount=${CENTS}&maxAmount=${CENTS}&limit=50`);
  await expect(page.getByTestId("inbox-row")).toHaveCount(2);
  // The heading counts what the filters match in all.
  await expect(page.getByTestId("inbox-total")).toHaveText("2 decisions waiting");

  // Each row says what the thread page would: the late request on both, the fraud flag on one.
  const flaggedRow = inboxRow(page, flaggedThread);
  await expect(flaggedRow.locator('[data-testid="row-findings"] [data-code="flagged_order"]')).toHaveText(
    "Fraud screening flagged this order.",
  );
  await expect(flaggedRow.locator('[data-testid="row-findings"] [data-code="late_request"]')).toBeVisible();
  await expect(
    inboxRow(page, plainThread).locator('[data-testid="row-findings"] [data-code="flagged_order"]'),
  ).toHaveCount(0);

  // Both selected, `a Enter`: the confirmation names the findings per item and Enter does not approve.
  for (let i = 0; i < 2; i++) {
    await page.keyboard.press("j");
    await page.keyboard.press("x");
  }
  await expect(page.getByTestId("bulk-count")).toHaveText("2 selected");
  await page.keyboard.press("a");
  await expect(page.getByTestId("bulk-items").locator('[data-code="flagged_order"]')).toHaveCount(1);
  await expect(page.getByTestId("bulk-flagged-check")).toBeFocused();
  await expect(page.getByTestId("bulk-confirm-button")).toBeDisabled();
  await page.keyboard.press("Enter");
  await page.waitForTimeout(500);
  await expect(page.getByTestId("bulk-result")).toHaveCount(0);
  expect((await threadState(page, flaggedThread)).pendingInterrupts).toHaveLength(1);

  // The second key: Space ticks that the flagged order was checked; then the confirmation approves both.
  await page.keyboard.press("Space");
  await expect(page.getByTestId("bulk-confirm-button")).toBeEnabled();
  await page.getByTestId("bulk-confirm-button").focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("bulk-result")).toContainText("2 done / 0 refused", { timeout: 60_000 });
  await expect(page.getByTestId("inbox-total")).toHaveText("0 decisions waiting");
});
