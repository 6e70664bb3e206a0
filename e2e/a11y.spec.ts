import type { Page } from "@playwright/test";
import { expect, pausedThread, runOverApi, seriousViolations, test, threadState } from "./fixtures";

/* Accessibility (axe-core, serious and critical) of the inbox, the new-ticket form and the history page. */

async function ticket(page: Page, orderRef: string): Promise<string> {
  const message = `The item from ${orderRef} arrived broken. Refund please.`;
  return pausedThread(page, message, { orderRef });
}

async function ready(page: Page, testId: string) {
  await expect(page.getByTestId(testId)).toHaveAttribute("data-ready", "true");
}

test("the inbox, with decisions and with threads by status, has no serious accessibility violations", async ({
  page,
}) => {
  const threadId = await ticket(page, "ORD-1004");
  await page.goto("/");
  await ready(page, "inbox");
  await expect(page.locator(`[data-testid="inbox-row"][data-thread-id="${threadId}"]`)).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);

  // The skip link is the first stop and lands on the main content.
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to main content" })).toBeFocused();

  await page.goto("/?status=all");
  await ready(page, "inbox");
  await expect(page.getByTestId("thread-row").first()).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
});

test("the new-ticket form has no serious accessibility violations", async ({ page }) => {
  await page.goto("/threads/new");
  await ready(page, "new-ticket");
  expect(await seriousViolations(page)).toEqual([]);
});

test("the history page, with a diff, warnings and the state editor open, has no serious violations", async ({
  page,
}) => {
  const threadId = await ticket(page, "ORD-1003"); // auto-approved, then the email waits
  const pending = (await threadState(page, threadId)).pendingInterrupts;
  expect(pending.map((p: { action: string }) => p.action)).toEqual(["confirm_email"]);
  await runOverApi(page, threadId, {
    resume: [{ interruptId: pending[0].interruptId, status: "resolved", payload: { choice: "send" } }],
  });
  const { decisions } = await threadState(page, threadId);

  await page.goto(`/threads/${threadId}/history?checkpoint=${decisions[0].checkpointId}`);
  await ready(page, "history");
  await expect(page.getByTestId("checkpoint-diff")).toBeVisible();
  await expect(page.getByTestId("side-effect-warnings")).toBeVisible();
  await page.getByLabel("Edit the state before forking").check();
  expect(await seriousViolations(page)).toEqual([]);
});
