import { expect, pausedAccountChange, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * The time-travel viewer on the second agent (issue 34), the account change with its two parallel reviews: the fork
 * form comes from the agent's own editable state (two fields, the server's rules as typed), a branch started from the
 * first step with the customer's words changed asks both reviews again about the new account, the timeline filters to
 * the steps that asked a person, and the two lines' heads compare with the step where they part named.
 */

type Pending = { action: string; payload: { change?: { to?: string } } };

test("account change: fork with an edit through the form, filter and jump through the timeline, compare the two lines' heads", async ({
  page,
}, testInfo) => {
  test.slow();
  const threadId = await pausedAccountChange(page);
  const paused = await threadState(page, threadId);
  expect(paused.pendingInterrupts.map((p: Pending) => p.action)).toEqual(["review_change", "review_change"]);
  const mainHead = paused.checkpointId as string;

  await page.goto(`/threads/${threadId}/history`);
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  const detail = page.getByTestId("checkpoint-detail");
  await expect(detail).toHaveAttribute("data-checkpoint-id", mainHead);

  // Fork from the step where the customer's words are in the state and intake runs next (the step after the run's
  // input): the form has the agent's two editable fields, each at its value there.
  const line = page.getByTestId("checkpoint-row");
  const steps = await line.count();
  await expect(line.last()).toHaveAttribute("data-source", "input");
  await line
    .nth(steps - 2)
    .locator("button")
    .first()
    .click();
  const intake = await detail.getAttribute("data-checkpoint-id");
  expect(intake).not.toBe(mainHead);
  await page.getByLabel("Edit the state before forking").check();
  // The fork's word on side effects is the agent's, not the refund shop's: an account change has no refunds.
  await expect(page.getByTestId("side-effects-none")).toHaveText(
    "Nothing the thread already did can be reached again by a branch from here.",
  );
  const form = page.getByTestId("fork-form");
  const field = (name: string) => form.locator(`[data-testid="fork-field"][data-field="${name}"]`);
  await expect(form.getByTestId("fork-field")).toHaveCount(2);
  await expect(field("orderRef").locator("input")).toHaveValue("ORD-1003");
  const submit = page.getByTestId("fork-submit");
  // The server's rule for an order number, in the agent's words, as typed; the fork stays closed.
  await field("orderRef").locator("input").fill("ORD-12");
  await expect(field("orderRef").getByTestId("fork-field-error")).toHaveText(
    "Order number must look like ORD-1234",
  );
  await expect(submit).toBeDisabled();
  await field("orderRef").locator("input").fill("ORD-1003");
  const edited = "Please change my payout account to DE02 1203 0000 0000 2020 51.";
  await field("customerMessage").locator("textarea, input").fill(edited);
  await expect(field("customerMessage").getByTestId("fork-field-error")).toHaveText("");
  await expect(submit).toBeEnabled();
  await checkScreens(page, testInfo, "history-account-change-fork-form");
  const response = page.waitForResponse((r) => r.url().endsWith(`/api/threads/${threadId}/fork`));
  await submit.click();
  expect((await response).status()).toBe(202);
  await expect(page.getByTestId("fork-result")).toContainText("New branch started from step", {
    timeout: 15_000,
  });

  // The branch asks both reviews again, about the account in the edited words.
  await expect
    .poll(async () => {
      const state = await threadState(page, threadId);
      return state.checkpointId !== mainHead
        ? state.pendingInterrupts.map((p: Pending) => p.payload.change?.to)
        : [];
    })
    .toEqual(["DE02 1203 0000 0000 2020 51", "DE02 1203 0000 0000 2020 51"]);
  const branchHead = (await threadState(page, threadId)).checkpointId as string;

  // "Asked a person": the two lines' paused heads, and nothing else.
  await page.reload();
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  const rows = page.getByTestId("checkpoint-row");
  const total = await rows.count();
  await page.getByTestId("timeline-asked").check();
  await expect(page.getByTestId("timeline-count")).toHaveText(`2 of ${total} steps match.`);
  const asked = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-checkpoint-id")));
  expect(asked.sort()).toEqual([mainHead, branchHead].sort());
  await page.getByTestId("timeline-clear").click();
  await expect(rows).toHaveCount(total);

  // By node: intake's steps, one on each line. By source: the fork's own step, the state edit.
  const node = page.getByTestId("timeline-node");
  await node.selectOption("intake");
  const byNode = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-nodes") ?? ""));
  expect(byNode.length).toBe(2);
  for (const nodes of byNode) expect(nodes.split(" ")).toContain("intake");
  await node.selectOption("");
  await page.getByTestId("timeline-source").selectOption("update");
  const sources = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-source")));
  expect(sources).toEqual(["update"]);
  await page.getByTestId("timeline-clear").click();

  // Jumps: to a step by number, to the first step of its line, to the head.
  const first = rows.last();
  const firstNumber = await first.getAttribute("data-number");
  const firstId = await first.getAttribute("data-checkpoint-id");
  await page.getByTestId("jump-head").click();
  await page.getByTestId("jump-line-root").click();
  await expect(detail).toHaveAttribute("data-checkpoint-id", firstId ?? "");
  await page.getByTestId("jump-step").fill(String(Number(firstNumber) + 1));
  await page.getByTestId("jump-step-go").click();
  await expect(detail).not.toHaveAttribute("data-checkpoint-id", firstId ?? "");
  await page.getByTestId("jump-step").fill(firstNumber ?? "");
  await page.getByTestId("jump-step-go").click();
  await expect(detail).toHaveAttribute("data-checkpoint-id", firstId ?? "");

  // Compare the branch's head with the main line's: where they part is named, and the edit is in the diff.
  await page.getByTestId("jump-head").click();
  await expect(detail).toHaveAttribute("data-checkpoint-id", branchHead);
  await page.getByTestId("compare-with").selectOption(mainHead);
  await expect(page.getByTestId("compare-ancestor")).toContainText(/Both descend from step \d+/);
  await expect(page.getByTestId("compare-diff").locator('[data-key="customerMessage"]')).toContainText(
    "DE02 1203",
  );
  await checkScreens(page, testInfo, "history-account-change-compare");
});
