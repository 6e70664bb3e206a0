import type { Browser } from "@playwright/test";
import {
  answerOverApi,
  expect,
  intakeKey,
  pausedThread,
  storageStatePath,
  test,
  threadState,
} from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, points 4 and 5: forms know the rules before the click. The approve button shows what is left to refund
 * and is disabled, with the reason, when approving can do nothing (the order is refunded down to less than asked),
 * when the operator is not allowed (a refund above the four-eyes threshold needs a supervisor), or when they supplied
 * the input (four-eyes). No refusal banner is needed to find out.
 */

async function pageAs(browser: Browser, role: "operator" | "supervisor") {
  const context = await browser.newContext({ storageState: storageStatePath(role) });
  return { context, page: await context.newPage() };
}

test("approve shows the refundable remainder when earlier refunds left less than the order total", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const first = await pausedThread(page, "The laptop from ORD-1008 has a scratch on the lid. Refund!", {
    orderRef: "ORD-1008",
  });
  await answerOverApi(page, first, "refund_approval", { decision: "approve_partial", amountCents: 20000 });
  const second = await pausedThread(
    page,
    "The laptop from ORD-1008 has a dead pixel now, refund €300.00 please.",
    {
      orderRef: "ORD-1008",
    },
  );
  const pending = (await threadState(page, second)).pendingInterrupts;
  expect(pending.map((p: { action: string }) => p.action)).toEqual(["refund_approval"]);

  await page.goto(`/threads/${second}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const approve = page.getByTestId("approve");
  await expect(approve).toHaveText("Approve €300.00 (€1,099.00 left to refund)");
  await expect(approve).toBeEnabled();
  await expect(page.getByTestId("refundable")).toContainText("€1,099.00 of the order's €1,299.00 is left");
  await checkScreens(page, testInfo, "remainder");
});

test("an operator sees before clicking that a large refund needs a supervisor; the supervisor may approve", async ({
  page,
  browser,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(page, "My laptop from ORD-1008 arrived broken. Full refund please.", {
    orderRef: "ORD-1008",
  });
  const operator = await pageAs(browser, "operator");
  try {
    await operator.page.goto(`/threads/${threadId}`);
    await expect(operator.page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
    await expect(operator.page.getByTestId("approve")).toBeDisabled();
    await expect(operator.page.getByTestId("decision-refusal")).toContainText("need a supervisor");
    await expect(operator.page.getByTestId("approve")).toHaveAccessibleDescription(/need a supervisor/);
    // Rejecting stays open to them.
    await expect(operator.page.getByTestId("reject")).toBeEnabled();
    await checkScreens(operator.page, testInfo, "operator-refused");
  } finally {
    await operator.context.close();
  }

  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("approve")).toBeEnabled();
  await expect(page.getByTestId("decision-refusal")).toHaveCount(0);
});

test("whoever started the run sees that someone else must approve (four-eyes), before any click", async ({
  browser,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const operator = await pageAs(browser, "operator");
  try {
    const { page } = operator;
    // Filed by the intake key, started by this operator: they supplied the input.
    const message = "The headphones from ORD-1002 stopped charging. Refund please.";
    const created = await page.request.post("/api/threads", {
      headers: { authorization: `Bearer ${intakeKey()}` },
      data: { message, orderRef: "ORD-1002" },
    });
    expect(created.status()).toBe(201);
    const threadId = (await created.json()).threadId as string;
    await page.goto(`/threads/${threadId}`);
    await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
    await page.getByTestId("start-run").click();
    await expect(page.getByTestId("decision-refund_approval")).toBeVisible({ timeout: 20_000 });
    await expect(page.getByTestId("decision-refusal")).toContainText("someone else must approve");
    await expect(page.getByTestId("approve")).toBeDisabled();
    await checkScreens(page, testInfo, "four-eyes");
  } finally {
    await operator.context.close();
  }
});
