import { expect, pausedThread, resumeAs, test, threadState } from "./fixtures";
import { checkScreens, developerWords } from "./support/console";

/*
 * Issue 12, point 6: every message shown to an operator is written for them — a refusal from the server is a
 * sentence with what to do, its code only in a details line — and limits are shown as counters, never a silent cut.
 */

test("the new-ticket form shows the message's limit as you type, and says when it is reached", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  await page.goto("/threads/new");
  await expect(page.getByTestId("new-ticket")).toHaveAttribute("data-ready", "true");
  const counter = page.locator("#ticket-message-count");
  await expect(counter).toHaveText("0 / 5,000 characters");
  await page.getByTestId("ticket-message").fill("x".repeat(5100));
  await expect(page.getByTestId("ticket-message")).toHaveValue("x".repeat(5000));
  await expect(counter).toHaveText("5,000 / 5,000 characters — the limit is reached");
  await checkScreens(page, testInfo, "new-ticket");
});

test("a decision taken meanwhile by someone else is said in words; no code, zod or API wording on the page", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(page, "My headphones from ORD-1002 stopped charging. Refund please.", {
    orderRef: "ORD-1002",
  });
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");

  // An operator rejects it over the API while this page still shows the form.
  const [pending] = (await threadState(page, threadId)).pendingInterrupts;
  await resumeAs("operator", threadId, pending.interruptId, { decision: "reject", note: "Out of warranty" });

  // The page may have heard of it already (the inbox stream names the thread, and the page re-reads it): the form
  // is then closed. While it is still open, approving hears it from the server's refusal instead. Either way the
  // operator reads who decided, in words.
  const card = page.getByTestId("decision-refund_approval");
  const approve = card.getByTestId("approve");
  if (await approve.isEnabled()) {
    await card
      .getByLabel("Internal note")
      .fill("Looks fine to me", { timeout: 2_000 })
      .catch(() => {});
    await approve.click({ timeout: 2_000 }).catch(() => {});
  }
  await expect(page.getByTestId("decided-elsewhere").first()).toContainText("already decided this");
  expect(await developerWords(page)).toEqual([]);
  await checkScreens(page, testInfo, "decided-elsewhere");
});
