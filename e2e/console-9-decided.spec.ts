import { answerOverApi, expect, pausedThread, resumeAs, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 9: a form somebody else answered closes showing the answer actually taken (from the decision
 * ledger or the server's refusal), never the form's default option.
 */

test("a closed 'already decided' form shows the option that was taken, not the default", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  // ORD-1011 was paid by bank transfer: after the approval the agent asks how to pay it back.
  const threadId = await pausedThread(page, "Refund for ORD-1011 please: the rain jacket leaks.", {
    orderRef: "ORD-1011",
  });
  await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const card = page.getByTestId("decision-select_option");
  await expect(card.getByTestId("option-original_payment")).toBeChecked(); // the default, before anyone answers

  // An operator chooses store credit over the API while this page still shows the form with its default.
  const [pending] = (await threadState(page, threadId)).pendingInterrupts;
  await resumeAs("operator", threadId, pending.interruptId, { optionId: "store_credit" });

  // The page may have closed the form already (it hears of decisions taken elsewhere at once); while it is open,
  // submitting hears it from the server's refusal instead.
  const submit = card.getByTestId("submit-option");
  if (await submit.isEnabled()) await submit.click({ timeout: 2_000 }).catch(() => {});
  await expect(card.getByTestId("decided-elsewhere")).toContainText(/chose store credit/i, {
    timeout: 20_000,
  });
  await expect(card.getByTestId("option-store_credit")).toBeChecked();
  await expect(card.getByTestId("option-original_payment")).not.toBeChecked();
  await checkScreens(page, testInfo, "decided-shows-answer");
});
