import type { Page } from "@playwright/test";
import { expect, pausedThread, seriousViolations, test, threadState } from "./fixtures";

/** Press Tab until the element with `testId` has focus (keyboard only: no clicks, no `focus()`). */
async function tabTo(page: Page, testId: string, maxPresses = 40) {
  for (let i = 0; i < maxPresses; i += 1) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? null);
    if (focused === testId) return;
  }
  throw new Error(`${testId} was not reached with ${maxPresses} Tab presses`);
}

/** The focused element draws a visible focus indicator (an outline). */
async function focusIsVisible(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el) return false;
    const style = getComputedStyle(el);
    return style.outlineStyle !== "none" && Number.parseFloat(style.outlineWidth) > 0;
  });
}

test("the whole approve flow with the keyboard only", async ({ page }) => {
  const threadId = await pausedThread(page, "Refund for ORD-1010 please, the running shoes hurt.");
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("decision-refund_approval")).toBeVisible();

  await tabTo(page, "approve");
  expect(await focusIsVisible(page)).toBe(true);
  await page.keyboard.press("Enter");

  // The new decision takes focus when it arrives; Tab goes on from there.
  const email = page.getByTestId("decision-confirm_email");
  await expect(email).toBeVisible({ timeout: 20_000 });
  await expect(email.getByRole("heading")).toBeFocused();
  await tabTo(page, "send-as-is");
  expect(await focusIsVisible(page)).toBe(true);
  await page.keyboard.press("Space");

  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  const state = await threadState(page, threadId);
  expect(state.decisions.map((d: { status: string; answer: unknown }) => [d.status, d.answer])).toEqual([
    ["resolved", { decision: "approve" }],
    ["resolved", { choice: "send" }],
  ]);
  expect(state.values.email).toMatchObject({ status: "queued" });
});

test("no serious or critical axe violations on a thread waiting for approval", async ({ page }) => {
  const threadId = await pausedThread(page, "Refund ORD-1007 please, the scarf has a hole.");
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("decision-refund_approval")).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
});
