import { expect, pausedThread, resumeAs, storageStatePath, test, threadState } from "./fixtures";

/*
 * Issue 33: an open thread page is never behind the API for more than 2 s. A decision taken elsewhere (another
 * operator, over the API) reaches the page through the inbox stream, which names the thread; the page re-reads its
 * state at once instead of at its next poll (every 5 s while nothing runs), and closes the form saying who decided.
 */
test("a decision taken elsewhere shows on the open thread page within 2 s", async ({ page }) => {
  const threadId = await pausedThread(page, "The running shoes from ORD-1010 fell apart. Please refund me.", {
    orderRef: "ORD-1010",
  });
  await page.goto(`/threads/${threadId}`);
  const thread = page.getByTestId("thread-page");
  await expect(thread).toHaveAttribute("data-ready", "true");
  // The page follows the inbox stream (it says so once the server subscribed it).
  await expect(thread).toHaveAttribute("data-claims-live", "true");
  const card = page.getByTestId("decision-refund_approval");
  await expect(card).toBeVisible();

  const [pending] = (await threadState(page, threadId)).pendingInterrupts;
  await resumeAs("operator", threadId, pending.interruptId, { decision: "reject", note: "Worn for a year." });
  const decidedAt = Date.now();
  await expect(card.getByTestId("decided-elsewhere")).toBeVisible({ timeout: 2_000 });
  expect(Date.now() - decidedAt).toBeLessThan(2_000);
});

test("a viewer's page follows too: the decided question closes within 2 s", async ({ page, browser }) => {
  const threadId = await pausedThread(page, "The running shoes from ORD-1010 fell apart. Please refund me.", {
    orderRef: "ORD-1010",
  });
  const context = await browser.newContext({ storageState: storageStatePath("viewer") });
  try {
    const viewer = await context.newPage();
    await viewer.goto(`/threads/${threadId}`);
    const thread = viewer.getByTestId("thread-page");
    await expect(thread).toHaveAttribute("data-ready", "true");
    await expect(thread).toHaveAttribute("data-claims-live", "true");
    await expect(viewer.getByTestId("decision-refund_approval")).toBeVisible();

    const [pending] = (await threadState(page, threadId)).pendingInterrupts;
    await resumeAs("operator", threadId, pending.interruptId, {
      decision: "reject",
      note: "Worn for a year.",
    });
    const decidedAt = Date.now();
    // The question closes: gone from the page, or kept closed saying who decided.
    const card = viewer.getByTestId("decision-refund_approval");
    await expect
      .poll(
        async () => (await card.count()) === 0 || (await card.getByTestId("decided-elsewhere").count()) > 0,
        { timeout: 2_000, intervals: [50] },
      )
      .toBe(true);
    expect(Date.now() - decidedAt).toBeLessThan(2_000);
  } finally {
    await context.close();
  }
});
