import type { Page } from "@playwright/test";
import { answerOverApi, expect, pausedThread, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 9, the history's labels: "Asked a person" on the step the asking node wrote (not the one before
 * it); step numbers that no two lanes share; the thread's status following a fork; and no "Approved" that reads
 * as money refunded when nothing was.
 */

const row = (page: Page, checkpointId: string) =>
  page.locator(`[data-testid="checkpoint-row"][data-checkpoint-id="${checkpointId}"]`);

test("history labels: who asked a person, unique step numbers across lanes, live status after a fork", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(page, "The running shoes from ORD-1010 fell apart. Please refund me.", {
    orderRef: "ORD-1010",
  });
  await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  await answerOverApi(page, threadId, "confirm_email", { choice: "dont_send" });
  const finished = await threadState(page, threadId);
  expect(finished.status).toBe("completed");
  // The approval was raised at the checkpoint the policy check wrote; human_review ran from it.
  const raisedAt = finished.decisions.find((d: { action: string }) => d.action === "refund_approval")
    .checkpointId as string;

  await page.goto(`/threads/${threadId}/history`);
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("history").getByTestId("status-badge")).toHaveText("Completed");

  // The checkpoint written by the policy check did not ask anyone; the one human_review wrote did.
  await expect(row(page, raisedAt)).toContainText("check_policy");
  await expect(row(page, raisedAt).getByTestId("asked-a-person")).toHaveCount(0);
  const reviewRow = page.getByTestId("checkpoint-row").filter({ hasText: "human_review" });
  await expect(reviewRow.getByTestId("asked-a-person")).toHaveCount(1);

  // The approval's own checkpoint: approved, but no money has moved yet at that step.
  await reviewRow.getByRole("button").click();
  await expect(page.getByTestId("checkpoint-decision")).toContainText("Approved");
  await expect(page.getByTestId("checkpoint-decision")).toContainText("nothing refunded yet");

  // Fork at the approval: the branch runs to the approval again and the status says so without a reload.
  await row(page, raisedAt).getByRole("button").click();
  await page.getByTestId("fork-submit").click();
  await expect(page.getByTestId("fork-result")).toBeVisible();
  await expect(page.getByTestId("history").getByTestId("status-badge")).toHaveText("Waiting for a decision", {
    timeout: 20_000,
  });
  await expect(page.locator('[data-testid="checkpoint-row"][data-branch="branch-1"]').first()).toBeVisible();
  // Both lanes hold steps after the fork point; no two rows share a step number.
  const numbers = await page
    .getByTestId("checkpoint-row")
    .evaluateAll((rows) => rows.map((r) => /Step (\d+)/.exec(r.textContent ?? "")?.[1] ?? ""));
  expect(numbers.length).toBeGreaterThan(5);
  expect(new Set(numbers).size).toBe(numbers.length);
  await checkScreens(page, testInfo, "history-after-fork");
});
