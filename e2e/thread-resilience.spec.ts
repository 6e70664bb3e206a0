import type { Page } from "@playwright/test";
import { emailOf, expect, openReady, pausedThread, storageStatePath, test, threadState } from "./fixtures";

/** Statuses of this page's POST …/runs responses, as they come. */
function runResponses(page: Page): number[] {
  const statuses: number[] = [];
  page.on("response", (r) => {
    if (r.request().method() === "POST" && r.url().endsWith("/runs")) statuses.push(r.status());
  });
  return statuses;
}

test("refresh while a decision is pending: the form is back and approving works", async ({ page }) => {
  const threadId = await pausedThread(page, "Refund for ORD-1011 please: the rain jacket leaks.");
  await openReady(page, `/threads/${threadId}`, "thread-page");
  await expect(page.getByTestId("decision-refund_approval")).toContainText("ORD-1011");
  await page.reload();
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const approval = page.getByTestId("decision-refund_approval");
  await expect(approval.getByTestId("approve")).toBeEnabled();
  await approval.getByTestId("approve").click();
  // ORD-1011 was paid by bank transfer: the next question is how to pay it back.
  await expect(page.getByTestId("decision-select_option")).toBeVisible({ timeout: 20_000 });
  const state = await threadState(page, threadId);
  expect(state.decisions[0]).toMatchObject({ action: "refund_approval", status: "resolved" });
  expect(state.pendingInterrupts.map((p: { action: string }) => p.action)).toEqual(["select_option"]);
});

test("a double-click on approve sends one decision", async ({ page }) => {
  const threadId = await pausedThread(page, "Please refund ORD-1002, the headphones crackle.");
  await openReady(page, `/threads/${threadId}`, "thread-page");
  const statuses = runResponses(page);
  await page.getByTestId("approve").dblclick();
  const email = page.getByTestId("decision-confirm_email");
  await expect(email).toBeVisible({ timeout: 20_000 });
  expect(statuses).toEqual([200]);

  // Two clicks in one task, before React can re-render and disable the button: the in-flight guard holds.
  await page.getByTestId("send-as-is").evaluate((button: HTMLButtonElement) => {
    button.click();
    button.click();
  });
  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  expect(statuses).toEqual([200, 200]);

  const state = await threadState(page, threadId);
  expect(state.decisions.map((d: { action: string; status: string }) => [d.action, d.status])).toEqual([
    ["refund_approval", "resolved"],
    ["confirm_email", "resolved"],
  ]);
  expect(state.values.refund).toMatchObject({ orderId: "ORD-1002" });
});

test("two tabs approve at once: one decision, and the other tab says who decided", async ({
  page,
  browser,
}) => {
  const threadId = await pausedThread(page, "Refund ORD-1002 please, the headphones stopped charging.");
  // Two people: the supervisor in tab A, an operator (signed in on their own) in tab B. €249.00 is within an
  // operator's limit.
  const tabA = page;
  const operatorContext = await browser.newContext({
    baseURL: test.info().project.use.baseURL,
    storageState: storageStatePath("operator"),
  });
  const tabB = await operatorContext.newPage();
  await openReady(tabA, `/threads/${threadId}`, "thread-page");
  await openReady(tabB, `/threads/${threadId}`, "thread-page");
  await expect(tabA.getByTestId("signed-in-as")).toContainText(emailOf("supervisor"));
  await expect(tabB.getByTestId("signed-in-as")).toContainText(emailOf("operator"));
  const statusesA = runResponses(tabA);
  const statusesB = runResponses(tabB);

  await Promise.all([tabA.getByTestId("approve").click(), tabB.getByTestId("approve").click()]);
  await expect.poll(() => [...statusesA, ...statusesB].sort(), { timeout: 20_000 }).toEqual([200, 409]);
  const [winner, loser, winnerEmail] =
    statusesA[0] === 200 ? [tabA, tabB, emailOf("supervisor")] : [tabB, tabA, emailOf("operator")];

  const notice = loser.getByTestId("decided-elsewhere");
  await expect(notice).toContainText(`${winnerEmail} already decided this`);
  await expect(notice).toContainText("Approved");
  await expect(loser.getByTestId("decision-refund_approval").getByTestId("approve")).toBeDisabled();
  await expect(winner.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 20_000 });

  const state = await threadState(page, threadId);
  const approvals = state.decisions.filter((d: { action: string }) => d.action === "refund_approval");
  expect(approvals).toHaveLength(1);
  expect(approvals[0]).toMatchObject({ status: "resolved", resolvedBy: winnerEmail });
  expect(state.values.refund).toMatchObject({ orderId: "ORD-1002" });
  expect(state.values.decision).toMatchObject({ decision: "approve", operatorId: winnerEmail });
  await operatorContext.close();
});

/*
 * The fallback view. The server only ever raises contract payloads, so the test makes an unknown one by rewriting
 * the page's own re-read of `GET /api/threads/{id}` with `page.route` (the page re-reads it right after hydrating).
 * The server render stays real; no test-only route or flag exists in the app. The rewritten payload carries markup
 * that must stay text.
 */
test("an unknown action renders in the safe fallback view without breaking the page", async ({ page }) => {
  const threadId = await pausedThread(page, "Refund ORD-1006 please, the lamp flickers.");
  const hostile = "<img src=x onerror=window.__pwned=1>";
  await page.route(`**/api/threads/${threadId}`, async (route) => {
    const response = await route.fetch();
    const view = await response.json();
    view.pendingInterrupts = view.pendingInterrupts.map((p: { interruptId: string }) => ({
      interruptId: p.interruptId,
      action: "unknown",
      payload: null,
      raw: {
        action: "issue_voucher",
        title: hostile,
        voucher: { code: "<script>window.__pwned=2</script>" },
      },
      invalid:
        'Invalid input: expected one of "refund_approval"|"select_option"|"input_text"|"confirm_email"',
      raisedAt: null,
    }));
    await route.fulfill({ response, json: view });
  });
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await openReady(page, `/threads/${threadId}`, "thread-page");

  const fallback = page.getByTestId("decision-fallback");
  await expect(fallback).toBeVisible();
  await expect(fallback).toContainText("action issue_voucher");
  await expect(fallback.getByTestId("fallback-raw")).toContainText(hostile);
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  expect(dialogs).toEqual([]);
  // The rest of the page still works.
  await expect(page.getByTestId("message").first()).toContainText("ORD-1006");
  await expect(page.getByTestId("ledger-entry")).toHaveCount(1);

  // Not JSON: refused on the page. JSON the real contract refuses: the server's code and message are shown.
  await fallback.getByTestId("fallback-answer").fill("approve it");
  await fallback.getByTestId("submit-fallback").click();
  await expect(fallback.getByRole("alert")).toContainText("must be JSON");
  await fallback.getByTestId("fallback-answer").fill('{"decision": "maybe"}');
  await fallback.getByTestId("submit-fallback").click();
  const error = page.getByTestId("server-error");
  await expect(error).toHaveAttribute("data-code", "unprocessable:answer");
  await expect(error).toContainText("The answer is not complete.");
  await expect(error.getByTestId("error-details")).toHaveText("Details for support: unprocessable · answer");
  await expect(fallback.getByTestId("submit-fallback")).toBeEnabled();
  await page.waitForLoadState("networkidle"); // the page re-read the thread after the refusal
  await expect(error).toHaveAttribute("data-code", "unprocessable:answer");
});
