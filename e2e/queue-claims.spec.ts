import type { Page } from "@playwright/test";
import { apiAs, emailOf, expect, pausedThread, test, threadState } from "./fixtures";
import { inboxRow, lateOrders, openLiveInbox, pageAs } from "./support/queue";

/*
 * Two operators on one queue: A (the operator) and B (the supervisor, this suite's default user) in two browser
 * contexts. Claims show up live in the other inbox; B cannot answer A's item without taking it over; A's decision
 * removes the item from B's inbox with no reload. "Within 1 s" is the acceptance bound.
 */
const LIVE_MS = 1_000;

test("A claims, B sees it within 1 s and must take over to answer; A's decision leaves B's inbox within 1 s", async ({
  page,
  browser,
}) => {
  const [order] = await lateOrders(7100, 1, 3900);
  const threadId = await pausedThread(page, `The item from ${order} broke. I want a refund.`, {
    orderRef: order,
  });
  const interruptId = (await threadState(page, threadId)).pendingInterrupts[0].interruptId as string;

  const a = await pageAs(browser, "operator");
  await openLiveInbox(a);
  await openLiveInbox(page);
  await page.evaluate(() => Object.assign(window, { sameDocument: true }));
  await expect(inboxRow(page, threadId).getByTestId("claim-status")).toHaveText("Unassigned");

  // A claims: B sees who handles it, and B's Claim button has become "Take over".
  await inboxRow(a, threadId).getByTestId("claim-button").click();
  await expect(inboxRow(a, threadId).getByTestId("claim-status")).toContainText("You are handling this");
  await expect(inboxRow(page, threadId).getByTestId("claim-status")).toContainText(
    `Being handled by ${emailOf("operator")} since`,
    { timeout: LIVE_MS },
  );
  await expect(inboxRow(page, threadId).getByTestId("claim-button")).toHaveCount(0);
  await expect(inboxRow(page, threadId).getByTestId("take-over-button")).toBeVisible();

  // B answering without taking over is refused, with who handles it.
  await inboxRow(page, threadId).getByTestId("row-select").check();
  await page.getByTestId("bulk-approve").click();
  await page.getByTestId("bulk-confirm-button").click();
  await expect(page.getByTestId("bulk-result")).toContainText("0 done / 1 refused");
  await expect(page.getByTestId("bulk-refused-item")).toHaveAttribute("data-code", "conflict:claimed");
  await expect(page.getByTestId("bulk-refused-item")).toContainText(emailOf("operator"));

  // B takes over; A sees it live; A takes it back.
  await inboxRow(page, threadId).getByTestId("take-over-button").click();
  await expect(inboxRow(page, threadId).getByTestId("claim-status")).toContainText("You are handling this");
  await expect(inboxRow(a, threadId).getByTestId("claim-status")).toContainText(
    `Being handled by ${emailOf("supervisor")}`,
    { timeout: LIVE_MS },
  );
  await inboxRow(a, threadId).getByTestId("take-over-button").click();
  await expect(inboxRow(page, threadId).getByTestId("claim-status")).toContainText(
    `Being handled by ${emailOf("operator")}`,
    { timeout: LIVE_MS },
  );

  // A decides (as the thread page would); the row leaves B's inbox with no reload.
  const res = await a.request.post(`/api/threads/${threadId}/decisions/${interruptId}`, {
    data: { answer: { decision: "approve" } },
  });
  expect(res.status()).toBe(202);
  await expect(inboxRow(page, threadId)).toHaveCount(0, { timeout: LIVE_MS });
  await expect(inboxRow(a, threadId)).toHaveCount(0, { timeout: LIVE_MS });
  expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(
    true,
  );
  await a.context().close();
});

test("the thread page: A's claim shows on B's answer buttons within 1 s; B must take over to answer", async ({
  page,
  browser,
}) => {
  const [order] = await lateOrders(7120, 1, 3900);
  const threadId = await pausedThread(page, `The lamp from ${order} arrived broken. Refund please.`, {
    orderRef: order,
  });
  const interruptId = (await threadState(page, threadId)).pendingInterrupts[0].interruptId as string;
  const card = (p: Page) =>
    p.locator(`[data-testid="decision-refund_approval"][data-interrupt-id="${interruptId}"]`);
  const openThread = async (p: Page) => {
    await p.goto(`/threads/${threadId}`);
    await expect(p.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
    await expect(p.getByTestId("thread-page")).toHaveAttribute("data-claims-live", "true");
  };

  const a = await pageAs(browser, "operator");
  await openThread(page);
  await page.evaluate(() => Object.assign(window, { sameDocument: true }));
  await expect(card(page).getByTestId("thread-claim")).toHaveCount(0);
  await expect(card(page).getByTestId("approve")).toBeEnabled();

  // A claims (from the inbox, as another tab would): B's buttons say who handles it, with no reload.
  await openLiveInbox(a);
  await inboxRow(a, threadId).getByTestId("claim-button").click();
  await expect(card(page).getByTestId("thread-claim")).toContainText(
    `Being handled by ${emailOf("operator")} since`,
    { timeout: LIVE_MS },
  );
  await expect(card(page).getByTestId("thread-claim")).toContainText("take over to answer");
  await expect(card(page).getByTestId("approve")).toBeDisabled();
  await expect(card(page).getByTestId("reject")).toBeDisabled();

  // A on the thread page sees the item as theirs; B takes over, and A's page says so within 1 s.
  await openThread(a);
  await expect(card(a).getByTestId("thread-claim")).toContainText("You are handling this since");
  await expect(card(a).getByTestId("approve")).toBeEnabled();
  await card(page).getByTestId("thread-take-over").click();
  await expect(card(page).getByTestId("thread-claim")).toContainText("You are handling this since");
  await expect(card(page).getByTestId("approve")).toBeEnabled();
  await expect(card(a).getByTestId("thread-claim")).toContainText(
    `Being handled by ${emailOf("supervisor")}`,
    {
      timeout: LIVE_MS,
    },
  );
  await expect(card(a).getByTestId("approve")).toBeDisabled();

  // B answers; the decision releases the claim. The approval is no longer pending (the run it resumes may already
  // have paused at the reply's confirmation, a question of its own).
  await card(page).getByTestId("approve").click();
  await expect
    .poll(async () =>
      (await threadState(page, threadId)).pendingInterrupts.some(
        (p: { interruptId: string }) => p.interruptId === interruptId,
      ),
    )
    .toBe(false);
  expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(
    true,
  );
  const claims = await (await page.request.get(`/api/inbox/claims?threadId=${threadId}`)).json();
  expect(claims.claims).toEqual([]);
  await a.context().close();
});

test("My queue and Unassigned list what I handle and what nobody handles; a supervisor assigns", async ({
  page,
}) => {
  const orders = await lateOrders(7110, 2, 3900);
  const [mine, other] = await Promise.all(
    orders.map((o) => pausedThread(page, `Refund for ${o}, it broke.`, { orderRef: o })),
  );
  await openLiveInbox(page);
  await inboxRow(page, mine!).getByTestId("claim-button").click();
  await expect(inboxRow(page, mine!).getByTestId("claim-status")).toContainText("You are handling this");

  await openLiveInbox(page, "assigned=me&limit=200");
  await expect(inboxRow(page, mine!)).toBeVisible();
  await expect(inboxRow(page, other!)).toHaveCount(0);
  await openLiveInbox(page, "assigned=none&limit=200");
  await expect(inboxRow(page, other!)).toBeVisible();
  await expect(inboxRow(page, mine!)).toHaveCount(0);

  // Assign the unassigned one to the operator: it leaves Unassigned live.
  await inboxRow(page, other!).getByTestId("assign-button").click();
  await inboxRow(page, other!).getByTestId("assign-email").fill(emailOf("operator"));
  await inboxRow(page, other!).getByTestId("assign-submit").click();
  await expect(inboxRow(page, other!)).toHaveCount(0);
  const operator = await apiAs("operator");
  const list = await (await operator.get("/api/threads?assigned=me&limit=200")).json();
  expect(list.items.map((i: { thread: { threadId: string } }) => i.thread.threadId)).toContain(other);
  await operator.dispose();
});
