import { expect, openReady, refundedThread, storageStatePath, test, threadState } from "./fixtures";
import { lateOrders } from "./support/queue";

/*
 * A branch offers no money that is gone (issue 55): a refund approved and paid in full on the main line, then
 * answered differently — the branch asks the approval again. Someone else (not who branched, so four-eyes closes
 * nothing here) opens the branch: no approval is offered, the page says why, and what the policy said of the amount
 * when it asked is marked as said then, not shown as a reason of its own.
 */
test("a branch of a thread whose order was refunded in full offers no approval, and says why", async ({
  page,
  browser,
}) => {
  test.slow();
  const [order] = (await lateOrders(7790, 1, 24_900)) as [string];
  const threadId = await refundedThread(
    page,
    `My headphones from ${order} are broken, please refund them.`,
    order,
  );
  const approved = (await threadState(page, threadId)).decisions.find(
    (d: { action: string }) => d.action === "refund_approval",
  );
  const branched = await page.request.post(
    `/api/threads/${threadId}/decisions/${approved.interruptId}/answer-differently`,
    { data: {} },
  );
  expect(branched.status()).toBeLessThan(300);
  await expect
    .poll(
      async () =>
        (await threadState(page, threadId)).pendingInterrupts.map((p: { action: string }) => p.action),
      { timeout: 30_000 },
    )
    .toEqual(["refund_approval"]);

  const admin = await browser.newContext({ storageState: storageStatePath("admin") });
  const other = await admin.newPage();
  await openReady(other, `/threads/${threadId}`, "thread-page");
  const card = other.getByTestId("decision-refund_approval");
  await expect(card.getByTestId("refundable")).toHaveAttribute("data-refundable-cents", "0");
  await expect(card.getByTestId("approve")).toBeDisabled();
  await expect(card.getByTestId("approve-partial")).toBeDisabled();
  await expect(card.getByTestId("reject")).toBeEnabled();
  const findings = card.getByTestId("policy-findings");
  await expect(findings).toContainText("€249.00 of this order was refunded since this was asked");
  await expect(findings).toContainText("nothing is left to refund");
  // The limit finding was about €249.00 when asked: said as then, never as today's reason.
  await expect(findings).toContainText("When this was asked: €249.00 is above the automatic approval limit");
  await expect(findings).not.toContainText(/^€249\.00 is above/);
  await admin.close();
});
