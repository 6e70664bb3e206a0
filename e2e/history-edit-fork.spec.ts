import { randomUUID } from "node:crypto";
import { createTicket, expect, runOverApi, test, threadState } from "./fixtures";

/*
 * Time travel with an edit, in the browser: a thread paused at its refund approval is forked from the history page
 * with the customer's reason and the requested amount changed; the branch runs to the approval again with the edit,
 * and the fork's checkpoint shows the change in its diff. On the embedded database this request used to hang the
 * whole console ("Forking…" for ever); npm test runs this spec there too.
 */
test("edits the request on a fork from the history page: the branch asks again with the edit, the diff shows it", async ({
  page,
}) => {
  const message = "The rain jacket from ORD-1011 leaks at the seams. Please refund it.";
  const threadId = await createTicket(page, message, "ORD-1011");
  await runOverApi(
    page,
    threadId,
    { messages: [{ id: randomUUID(), role: "user", content: message }] },
    { intake: true },
  );
  const paused = await threadState(page, threadId);
  expect(paused.pendingInterrupts.map((p: { action: string }) => p.action)).toEqual(["refund_approval"]);
  const approval = paused.checkpointId as string;

  await page.goto(`/threads/${threadId}/history`);
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("checkpoint-detail")).toHaveAttribute("data-checkpoint-id", approval);

  await page.getByLabel("Edit the state before forking").check();
  await page
    .getByLabel("State changes (JSON object)")
    .fill('{"requested": 5000, "reason": "Only one seam leaks."}');
  await page.getByLabel("Apply as if this node wrote it (optional)").selectOption("lookup_order");
  const response = page.waitForResponse((r) => r.url().endsWith(`/api/threads/${threadId}/fork`));
  await page.getByTestId("fork-submit").click();
  const forked = await (await response).json();
  expect((await response).status()).toBe(202);
  await expect(page.getByTestId("fork-result")).toContainText("New branch started from step", {
    timeout: 15_000,
  });

  // The branch runs to the approval again, asking about the edited amount.
  await expect
    .poll(async () => {
      const state = await threadState(page, threadId);
      return state.pendingInterrupts.map((p: { action: string }) => p.action);
    })
    .toEqual(["refund_approval"]);
  const branch = await threadState(page, threadId);
  expect(branch.checkpointId).not.toBe(approval);
  expect(branch.values).toMatchObject({ requested: 5000, reason: "Only one seam leaks." });

  // The fork's own checkpoint: its diff against the one forked from is the edit.
  const row = page.locator(
    `[data-testid="checkpoint-row"][data-checkpoint-id="${forked.checkpointId as string}"] button`,
  );
  await expect(row).toBeVisible({ timeout: 15_000 });
  await row.click();
  const diff = page.getByTestId("checkpoint-diff");
  await expect(diff.locator('[data-key="requested"]')).toContainText("5000");
  await expect(diff.locator('[data-key="reason"]')).toContainText("Only one seam leaks.");
});
