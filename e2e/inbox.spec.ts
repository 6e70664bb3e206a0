import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { apiAs, emailOf, expect, pausedThread, test, threadState } from "./fixtures";

/*
 * The inbox: live arrivals and departures, filters, keyset pagination, and the short way from the inbox to a
 * finished refund. Every test makes its own threads over the API; the server's database is shared by the whole run,
 * so assertions look for this test's rows rather than counting everything.
 */

/** A thread waiting for a refund approval on `orderRef`. */
async function pendingApproval(page: Page, orderRef: string): Promise<string> {
  const message = `The item from ${orderRef} broke after a week. I want a refund.`;
  const threadId = await pausedThread(page, message, { orderRef });
  const state = await threadState(page, threadId);
  expect(state.pendingInterrupts.map((p: { action: string }) => p.action)).toEqual(["refund_approval"]);
  return threadId;
}

const row = (page: Page, threadId: string) =>
  page.locator(`[data-testid="inbox-row"][data-thread-id="${threadId}"]`);

async function openInbox(page: Page, search: string) {
  await page.goto(`/?${search}`);
  await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
}

test("a new decision appears live, filters narrow the list, and a decision taken elsewhere leaves it", async ({
  page,
}) => {
  await openInbox(page, "limit=200");
  // Proof that nothing reloads the page: a flag set on this document must survive until the end.
  await page.evaluate(() => Object.assign(window, { sameDocument: true }));

  const threadId = await pendingApproval(page, "ORD-1011");
  await expect(row(page, threadId)).toBeVisible();
  await expect(row(page, threadId)).toContainText("Nora Berg");
  await expect(row(page, threadId)).toContainText("€149.00");
  await expect(row(page, threadId)).toContainText("Refund approval");

  // Action filter: another action hides it.
  await page.getByLabel("Action").selectOption("select_option");
  await page.getByTestId("apply-filters").click();
  await expect(page).toHaveURL(/action=select_option/);
  await expect(row(page, threadId)).toHaveCount(0);

  // Amount filter: €149 is below a €1,000 minimum, above a €100 one.
  await page.getByLabel("Action").selectOption("refund_approval");
  await page.getByLabel("Min amount (€)").fill("1000");
  await page.getByTestId("apply-filters").click();
  await expect(page).toHaveURL(/minAmount=100000/);
  await expect(row(page, threadId)).toHaveCount(0);
  await page.getByLabel("Min amount (€)").fill("100");
  await page.getByTestId("apply-filters").click();
  await expect(page).toHaveURL(/minAmount=10000(&|$)/);
  await expect(row(page, threadId)).toBeVisible();
  for (const action of await page
    .getByTestId("inbox-row")
    .evaluateAll((rows) => rows.map((r) => r.dataset.action))) {
    expect(action).toBe("refund_approval");
  }

  // Taken elsewhere (another operator, signed in on their own, over the API): the row leaves without a reload.
  const state = await threadState(page, threadId);
  const operator = await apiAs("operator");
  const res = await operator.post(`/api/threads/${threadId}/runs`, {
    data: {
      threadId,
      runId: randomUUID(),
      messages: [],
      resume: [
        {
          interruptId: state.pendingInterrupts[0].interruptId,
          status: "resolved",
          payload: { decision: "reject", note: "flagged order" },
        },
      ],
    },
  });
  expect(res.status()).toBe(200);
  await res.text();
  await operator.dispose();
  await expect(row(page, threadId)).toHaveCount(0);
  expect(await page.evaluate(() => (window as { sameDocument?: boolean }).sameDocument)).toBe(true);
  const decided = (await threadState(page, threadId)).decisions.find(
    (d: { action: string }) => d.action === "refund_approval",
  );
  expect(decided).toMatchObject({ status: "resolved", resolvedBy: emailOf("operator") });
});

test("pages through pending decisions oldest first with Next page and Back", async ({ page }) => {
  const mine: string[] = [];
  for (const order of ["ORD-1006", "ORD-1007", "ORD-1012"]) mine.push(await pendingApproval(page, order));
  await openInbox(page, "limit=2&action=refund_approval");

  const pages: string[][] = [];
  for (;;) {
    await expect(page.getByTestId("page-number")).toHaveText(`Page ${pages.length + 1}`);
    // The number changes at the click; the rows once the page has loaded (the buttons are disabled meanwhile).
    if (pages.length > 0) await expect(page.getByTestId("page-back")).toBeEnabled();
    // A row is a decision: one thread may have two pending (parallel tests share the inbox), so rows are told
    // apart by interrupt id.
    const ids = await page
      .getByTestId("inbox-row")
      .evaluateAll((rows) => rows.map((r) => `${r.dataset.threadId ?? ""} ${r.dataset.interruptId ?? ""}`));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThanOrEqual(2);
    pages.push(ids);
    if (await page.getByTestId("page-next").isDisabled()) break;
    await page.getByTestId("page-next").click();
  }
  const all = pages.flat();
  expect(pages.length).toBeGreaterThanOrEqual(2);
  expect(new Set(all).size).toBe(all.length);
  // Oldest first: this test's three decisions come in the order they were raised.
  expect(all.map((row) => row.split(" ")[0]).filter((id) => mine.includes(id as string))).toEqual(mine);

  await page.getByTestId("page-back").click();
  await expect(page.getByTestId("page-number")).toHaveText(`Page ${pages.length - 1}`);
  await expect(page.getByTestId("page-next")).toBeEnabled();
  await expect(page.getByTestId("inbox-row")).toHaveCount(pages[pages.length - 2]?.length ?? 0);
  const back = await page
    .getByTestId("inbox-row")
    .evaluateAll((rows) => rows.map((r) => `${r.dataset.threadId ?? ""} ${r.dataset.interruptId ?? ""}`));
  expect(back).toEqual(pages[pages.length - 2]);
});

test("approves a refund from the inbox to a finished thread in three clicks", async ({ page }) => {
  const threadId = await pendingApproval(page, "ORD-1008");
  await openInbox(page, "limit=200");
  let clicks = 0;

  await row(page, threadId).getByTestId("inbox-row-link").click();
  clicks += 1;
  await expect(page).toHaveURL(new RegExp(`/threads/${threadId}$`));
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");

  await page.getByTestId("approve").click();
  clicks += 1;
  await page.getByTestId("send-as-is").click();
  clicks += 1;

  await expect(page.getByTestId("email-outcome")).toHaveAttribute("data-email-status", "delivered", {
    timeout: 20_000,
  });
  await expect(page.getByTestId("refund-outcome")).toContainText("€1,299.00");
  expect(clicks).toBeLessThanOrEqual(3);
  const done = await threadState(page, threadId);
  expect(done.status).toBe("completed");
  expect(done.values.refund).toMatchObject({ orderId: "ORD-1008", amountCents: 129_900, status: "queued" });
  expect(done.values.email.status).toBe("queued");
});
