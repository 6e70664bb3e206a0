import { answerOverApi, emailOf, expect, pausedThread, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 7: a right-to-left override (U+202E) in an edited email subject must not reverse "by operator@…"
 * in the decision history: user text is isolated (<bdi>) and the control is shown, not applied.
 */

test("an RLO in an edited subject is shown as a marker and cannot reorder who decided", async ({
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
  const email = page.getByTestId("decision-confirm_email");
  await email.getByTestId("email-subject").fill("Your refund \u202Edetavorppa");
  await email.getByTestId("send-edited").click();

  const entry = page.getByTestId("ledger-entry").filter({ hasText: "edited email" });
  await expect(entry.getByTestId("ledger-answer")).toContainText("[U+202E]detavorppa");
  await expect(entry.getByTestId("ledger-by")).toHaveText(emailOf("supervisor"));
  // The isolate holds the user text: the "by" part is laid out after it, left to right.
  const answerBox = await entry.getByTestId("ledger-answer").boundingBox();
  const byBox = await entry.getByTestId("ledger-by").boundingBox();
  expect(answerBox && byBox && (byBox.y > answerBox.y + 2 || byBox.x > answerBox.x)).toBeTruthy();
  expect(await entry.evaluate((el) => el.textContent?.includes("\u202E"))).toBe(false);
  await checkScreens(page, testInfo, "bidi");
});
