import { expect, pausedThread, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 9: a message that is not a refund request must not complete with a holding reply nobody sends and
 * leave every queue. With no address the agent may write to, it ends in a person's task, "Reply to the customer",
 * which the inbox lists until someone marks it done.
 */

test("a question with no order stays in the inbox as 'Reply to the customer' until a person handles it", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(page, "Do you ship to Norway, and how long does it take?");
  const state = await threadState(page, threadId);
  expect(state.status).toBe("interrupted");
  expect(state.pendingInterrupts.map((p: { payload: { title: string } }) => p.payload.title)).toEqual([
    "Reply to the customer",
  ]);

  await page.goto("/?limit=200");
  await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
  const row = page.locator(`[data-testid="inbox-row"][data-thread-id="${threadId}"]`);
  await expect(row).toBeVisible();
  await checkScreens(page, testInfo, "inbox-reply-task");

  await row.getByTestId("inbox-row-link").click();
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const task = page.getByTestId("decision-select_option");
  await expect(task).toContainText("Reply to the customer");
  await checkScreens(page, testInfo, "reply-task");
  await task.getByTestId("option-replied").check();
  await task.getByTestId("submit-option").click();
  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  await page.goto("/?limit=200");
  await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
  await expect(row).toHaveCount(0);
});
