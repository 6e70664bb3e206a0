import {
  answerOverApi,
  expect,
  openReady,
  pausedThread,
  refundedThread,
  test,
  threadState,
} from "./fixtures";
import { checkScreens } from "./support/console";
import { lateOrders } from "./support/queue";

/*
 * "Answer differently" on the thread page (issue 34): a refund approved and paid on the main line; the supervisor
 * answers the approval differently from the decision history. The page shows the branch asking again, the other
 * line's answer beside it, and — once the branch is answered "reject" and its reply sent — both outcomes side by side.
 * The one who branched may not approve what the branch asks (four-eyes), only reject it. Nothing is paid twice.
 */

test("a refund approved on the main line, answered reject on a branch: both outcomes side by side, one payment", async ({
  page,
}, testInfo) => {
  test.slow();
  const [order] = (await lateOrders(7740, 1, 24_900)) as [string];
  const threadId = await refundedThread(
    page,
    `My headphones from ${order} are broken, please refund them.`,
    order,
  );

  await openReady(page, `/threads/${threadId}`, "thread-page");
  const approval = page.locator('[data-testid="ledger-entry"][data-action="refund_approval"]');
  await approval.getByTestId("answer-differently").click();
  // Nothing happens on the first click: it says what the branch cannot undo (the refund already recorded), and
  // that nothing waiting is cancelled; only the confirmation branches.
  const confirm = approval.getByTestId("answer-differently-confirm");
  await expect(confirm.getByTestId("answer-differently-warnings")).toContainText("A refund of €249.00");
  await expect(confirm).toContainText("Nothing waiting now is cancelled.");
  expect((await threadState(page, threadId)).status).toBe("completed");
  await confirm.getByTestId("answer-differently-go").click();

  // The branch asks again; the page says what the other line answered.
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const card = page.getByTestId("decision-refund_approval");
  await expect(card).toBeVisible({ timeout: 30_000 });
  const two = page.getByTestId("two-answers");
  await expect(two.getByTestId("other-answer")).toContainText("Approved — by supervisor@");
  await expect(two.getByTestId("this-answer")).toHaveText("Not answered yet");
  await expect(two.getByTestId("other-money")).toContainText("€249.00 refunded");
  // The form opens on the other way: the other line approved, so "Reject" is marked and named.
  await expect(card.getByTestId("suggested-answer")).toContainText("“Reject”");
  await expect(card.getByTestId("reject")).toHaveAttribute("data-suggested", "true");

  // Whoever branched started the branch: approving is someone else's; rejecting is theirs to give.
  await expect(card.getByTestId("approve")).toBeDisabled();
  await card.getByTestId("decision-note").fill("Not covered after all: the damage came from a fall.");
  await card.getByTestId("reject").click();
  const reply = page.getByTestId("decision-confirm_email");
  await expect(reply).toBeVisible({ timeout: 30_000 });
  // The branch's reply is drafted, not sent: the customer was told nothing by it yet.
  await expect(two.getByTestId("this-told")).toHaveText("Nothing yet: a draft, not sent");
  await reply.getByTestId("send-as-is").click();
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-status", "completed", {
    timeout: 30_000,
  });

  await expect(two.getByTestId("this-answer")).toContainText("Rejected");
  await expect(two.getByTestId("this-money")).toHaveText("Nothing refunded");
  await expect(two.getByTestId("other-money")).toContainText("€249.00 refunded");
  await checkScreens(page, testInfo, "thread-answer-differently");

  // One payment, whatever the branch did.
  const effects = await (await page.request.get(`/api/threads/${threadId}/effects`)).json();
  expect(effects.effects.filter((e: { kind: string }) => e.kind === "payment")).toHaveLength(1);
});

test("answer differently while the email waits: the confirmation names the email it cancels, Cancel changes nothing", async ({
  page,
}) => {
  test.slow();
  const [order] = await lateOrders(7750, 1, 24_900);
  const threadId = await pausedThread(page, `My kettle from ${order} leaks, please refund it.`, {
    orderRef: order,
  });
  await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  await expect
    .poll(
      async () =>
        (await threadState(page, threadId)).pendingInterrupts.map((p: { action: string }) => p.action),
      { timeout: 20_000 },
    )
    .toEqual(["confirm_email"]);

  await openReady(page, `/threads/${threadId}`, "thread-page");
  const approval = page.locator('[data-testid="ledger-entry"][data-action="refund_approval"]');
  await approval.getByTestId("answer-differently").click();
  const confirm = approval.getByTestId("answer-differently-confirm");
  // It says first what the branch cancels: the email waiting now.
  await expect(confirm.getByTestId("answer-differently-cancels")).toContainText("It cancels what waits now:");
  await expect(confirm.getByTestId("answer-differently-cancels").locator("li")).toHaveCount(1);
  await expect(confirm.getByTestId("answer-differently-cancels")).toContainText(
    "no longer applies on the branch",
  );
  await expect(confirm.getByTestId("answer-differently-warnings")).toContainText("A refund of €249.00");
  // Cancel: nothing branched, the email still waits.
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(confirm).toHaveCount(0);
  const after = await threadState(page, threadId);
  expect(after.pendingInterrupts.map((p: { action: string }) => p.action)).toEqual(["confirm_email"]);
  expect(after.forked).toBe(false);
  await expect(page.getByTestId("decision-confirm_email")).toBeVisible();
});
