import type { Page } from "@playwright/test";
import { apiAs, type E2eRole, expect, openReady, pausedAccountChange, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * "Answer differently" on the second agent (issue 34): an account change whose two parallel reviews were approved and
 * whose change was made. The supervisor answers the data check differently from the decision history: the branch asks
 * both reviews again, only the one answered differently opens on the other way ("reject", marked and named), and —
 * once the branch ends — the page sets the two lines side by side: the change made on one, nothing changed on the
 * other. The account is changed once, whatever the branch did.
 */

type Pending = { interruptId: string; action: string; payload: { review?: string } };

async function answerReview(page: Page, threadId: string, review: string, role: E2eRole, answer: unknown) {
  const pending: Pending[] = (await threadState(page, threadId)).pendingInterrupts;
  const item = pending.find((p) => p.payload?.review === review);
  expect(item, `${review} review pending`).toBeDefined();
  const api = await apiAs(role);
  try {
    const res = await api.post(`/api/threads/${threadId}/decisions/${item?.interruptId}`, {
      data: { status: "resolved", answer },
    });
    expect(res.status(), await res.text()).toBeLessThan(300);
  } finally {
    await api.dispose();
  }
}

test("an account change approved on the main line, the data check answered reject on a branch: both lines side by side, one change", async ({
  page,
}, testInfo) => {
  test.slow();
  const threadId = await pausedAccountChange(page);
  await answerReview(page, threadId, "fraud", "supervisor", { decision: "approve" });
  await answerReview(page, threadId, "data", "operator", { decision: "approve" });
  await expect
    .poll(async () => (await threadState(page, threadId)).status, { timeout: 30_000 })
    .toBe("completed");

  await openReady(page, `/threads/${threadId}`, "thread-page");
  await expect(page.getByTestId("change-outcome")).toHaveAttribute("data-status", "applied");
  // One line: nothing to disagree with.
  await expect(page.getByTestId("ledger-contradictions")).toHaveCount(0);
  const dataCheck = page
    .locator('[data-testid="ledger-entry"][data-action="review_change"]')
    .filter({ hasText: "operator@" });
  await dataCheck.getByTestId("answer-differently").click();
  await dataCheck.getByTestId("answer-differently-go").click();

  // The branch asks both reviews again; the data check opens on the other way, the fraud check as usual.
  const cards = page.getByTestId("decision-review_change");
  await expect(cards).toHaveCount(2, { timeout: 30_000 });
  const data = cards.filter({ hasText: "Data check" });
  const fraud = cards.filter({ hasText: "Fraud check" });
  await expect(data.getByTestId("suggested-answer")).toContainText("“Reject”");
  await expect(data.getByTestId("reject")).toHaveAttribute("data-suggested", "true");
  await expect(data.getByTestId("approve")).not.toHaveAttribute("data-suggested", "true");
  await expect(fraud.getByTestId("suggested-answer")).toHaveCount(0);
  const two = page.getByTestId("two-answers");
  await expect(two.getByTestId("other-answer")).toContainText("Approved — by operator@");
  await expect(two.getByTestId("this-answer")).toHaveText("Not answered yet");
  await expect(two.getByTestId("other-money")).toHaveText("The change is made");
  // The other line's email is the one delivering the change queued, as the effect ledger has it.
  await expect(two.getByTestId("other-email")).toContainText("“Your payout account”");
  await expect(two.getByTestId("this-money")).toHaveText("Nothing changed yet");
  await expect(two.getByTestId("this-email")).toHaveText("No email yet");
  // Two lines now: the email the other line sent is said, from the ledger of the whole thread.
  await expect(page.getByTestId("ledger-contradictions")).toContainText(
    "“Your payout account” to sofia.rossi@example.com was sent from another branch",
  );
  await checkScreens(page, testInfo, "thread-answer-differently-account-asked");

  // Whoever branched started the branch: approving is someone else's; rejecting is theirs to give.
  await expect(data.getByTestId("approve")).toBeDisabled();
  await data.getByTestId("decision-note").fill("The new account holder's name does not match the customer.");
  await data.getByTestId("reject").click();
  await expect(data.getByTestId("answered-notice")).toBeVisible({ timeout: 20_000 });
  await fraud.getByTestId("decision-note").fill("Rejected with the data check.");
  await fraud.getByTestId("reject").click();
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-status", "completed", {
    timeout: 30_000,
  });

  await expect(two.getByTestId("this-answer")).toContainText("Rejected");
  await expect(two.getByTestId("this-money")).toHaveText("Nothing changed");
  await expect(two.getByTestId("this-email")).toContainText("Email “Your payout account”");
  await expect(two.getByTestId("other-money")).toHaveText("The change is made");
  await checkScreens(page, testInfo, "thread-answer-differently-account");

  // The account was changed once, by the main line; the ledger names who answered each, on both lines.
  const effects = (await (await page.request.get(`/api/threads/${threadId}/effects`)).json()) as {
    effects: { kind: string }[];
  };
  const changes = effects.effects.filter((e) => e.kind !== "email");
  expect(changes).toHaveLength(1);
  const decisions: {
    action: string;
    status: string;
    resolvedBy: string | null;
    answer: { decision?: string };
  }[] = (await threadState(page, threadId)).decisions;
  const reviews = decisions.filter((d) => d.action === "review_change" && d.status === "resolved");
  expect(reviews.map((d) => [d.answer.decision, d.resolvedBy?.split("@")[0]]).sort()).toEqual([
    ["approve", "operator"],
    ["approve", "supervisor"],
    ["reject", "supervisor"],
    ["reject", "supervisor"],
  ]);
});
