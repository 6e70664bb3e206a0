import { expect, openReady, pausedAccountChange, storageStatePath, test, threadState } from "./fixtures";

/*
 * Two cards on one thread, each answered by a different role: an account change raises a fraud check (a supervisor's)
 * and a data check (an operator's) at once. The supervisor answers theirs and the page says it waits for the other;
 * the operator, in another browser, sees who took the first card, answers the second, and the run goes on.
 */
test("parallel reviews: a supervisor and an operator each answer their card; the change is applied", async ({
  page,
  browser,
}) => {
  const threadId = await pausedAccountChange(page);

  await openReady(page, `/threads/${threadId}`, "thread-page");
  const cards = page.getByTestId("decision-review_change");
  await expect(cards).toHaveCount(2);
  const fraud = cards.filter({ hasText: "Fraud check" });
  await expect(fraud).toContainText("Sofia Rossi");
  await fraud.getByTestId("approve").click();
  await expect(fraud.getByTestId("answered-notice")).toContainText("Waiting for the other decision");

  const operator = await browser.newContext({ storageState: storageStatePath("operator") });
  const other = await operator.newPage();
  await openReady(other, `/threads/${threadId}`, "thread-page");
  const theirs = other.getByTestId("decision-review_change");
  await expect(theirs.filter({ hasText: "Fraud check" }).getByTestId("answered-notice")).toContainText(
    "supervisor@",
  );
  const data = theirs.filter({ hasText: "Data check" });
  await data.getByTestId("approve").click();
  await expect(other.getByTestId("change-outcome")).toHaveAttribute("data-status", "applied", {
    timeout: 20_000,
  });
  await expect(other.getByTestId("status-badge")).toHaveText("Completed");
  // Old → new, and the page says the change is made only once its effect is delivered.
  const outcome = other.getByTestId("change-outcome");
  await expect(outcome.getByTestId("change-values")).toContainText("DE89 3704 0044 0532 0130 00");
  await expect(outcome).toHaveAttribute("data-effect-status", "delivered", { timeout: 20_000 });
  await expect(outcome).toContainText("the change is made in the customer's account");
  await other.screenshot({ path: test.info().outputPath("operator.png"), fullPage: true });
  await operator.close();

  // The supervisor's page follows without a reload.
  await expect(page.getByTestId("change-outcome")).toHaveAttribute("data-status", "applied", {
    timeout: 20_000,
  });
  const state = await threadState(page, threadId);
  expect(state.decisions.map((d: { status: string }) => d.status)).toEqual(["resolved", "resolved"]);
});
