import {
  answerOverApi,
  createTicket,
  expect,
  pausedThread,
  storageStatePath,
  test,
  threadState,
} from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 9, the items fixed: the draft reply is marked as a draft until sent and the edited text shows after
 * an edited send; titles are cut at a word; audit answers read as words; a viewer meets "Not allowed", not the
 * sign-in form. (The admin role confirmation is in console-7-screens.)
 */

test("the conversation marks the draft until it is sent, then shows the text that was actually sent", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(
    page,
    "The T-shirts from ORD-1003 are the wrong size, please refund them.",
    {
      orderRef: "ORD-1003",
    },
  );
  const [pending] = (await threadState(page, threadId)).pendingInterrupts;
  if (pending.action === "refund_approval") {
    await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  }
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const last = page
    .getByTestId("message")
    .filter({ has: page.locator("[data-testid=message-text]") })
    .last();
  await expect(last).toContainText("Draft reply — not sent yet");
  await checkScreens(page, testInfo, "draft");

  const email = page.getByTestId("decision-confirm_email");
  await email.getByTestId("email-body").fill("Dear Sofia, your refund is on its way. Kind regards, the shop");
  await email.getByTestId("send-edited").click();
  await expect(last).toContainText("reply sent to the customer", { timeout: 20_000 });
  await expect(last.getByTestId("message-text")).toHaveText(
    "Dear Sofia, your refund is on its way. Kind regards, the shop",
  );

  // The audit trail says what was answered in words; the recorded JSON is one click away.
  await page.goto(`/audit?thread=${threadId}`);
  await expect(page.getByTestId("audit-answer-summary").first()).toContainText("Sent an edited email");
  await checkScreens(page, testInfo, "audit-words");
});

test("a long ticket's title is cut at a word, with an ellipsis", async ({ page }) => {
  const message =
    "Hello team, the running shoes from ORD-1010 fell apart after two weeks of careful use, and I would like a refund.";
  const threadId = await createTicket(page, message, "ORD-1010");
  const { title } = await threadState(page, threadId);
  expect(title.endsWith("…")).toBe(true);
  expect(message.startsWith(title.slice(0, -1))).toBe(true);
  expect(message[title.length - 1]).toBe(" ");
});

test.describe("viewer", () => {
  test.use({ storageState: storageStatePath("viewer") });
  test("a viewer opening the new-ticket page is told it is not allowed, not sent to sign in", async ({
    page,
  }, testInfo) => {
    test.slow(); // four screens with axe per page
    await page.goto("/threads/new");
    await expect(page).toHaveURL(/\/not-allowed\?need=operator/);
    await expect(page.getByTestId("not-allowed")).toContainText("That page needs the operator role.");
    await checkScreens(page, testInfo, "not-allowed");
  });
});
