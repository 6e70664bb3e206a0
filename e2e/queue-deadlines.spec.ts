import { apiAs, expect, pausedThread, test, threadState } from "./fixtures";
import { inboxRow, lateOrders, openLiveInbox } from "./support/queue";

/*
 * Deadlines from policy. The suite's server looks for overdue items every 300 ms (playwright.config.ts); policies
 * here are scoped to an amount no other test uses, and removed at the end, so other tests keep the default deadline.
 * The "test clock" is a policy of a few seconds: the real clock passes it.
 */
const AMOUNT = 5123;

async function setPolicy(body: Record<string, unknown>) {
  const admin = await apiAs("admin");
  const res = await admin.post("/api/admin/sla", {
    data: { action: "refund_approval", minAmountCents: AMOUNT, ...body },
  });
  expect(res.status(), await res.text()).toBe(200);
  await admin.dispose();
}

test.afterAll(async () => {
  await setPolicy({ dueSeconds: 60, remove: true });
});

test("a deadline passes: the item escalates, and the expiry answer is recorded as system:expiry", async ({
  page,
}) => {
  const [first, second] = await lateOrders(7400, 2, AMOUNT);

  // 1. A deadline of 3 s without an expiry answer: the item shows its time left, then escalates and stays.
  await setPolicy({ dueSeconds: 3 });
  const escalating = await pausedThread(page, `Refund ${first}, it broke.`, { orderRef: first });
  await openLiveInbox(page, `minAmount=${AMOUNT}&maxAmount=${AMOUNT}&limit=50`);
  await expect(inboxRow(page, escalating).getByTestId("time-left")).toContainText(/left|Overdue/);
  await expect(inboxRow(page, escalating).getByTestId("escalated-badge")).toBeVisible({ timeout: 15_000 });
  await expect(inboxRow(page, escalating).getByTestId("time-left")).toHaveAttribute("data-overdue", "true");
  await openLiveInbox(page, "escalated=true&limit=200");
  await expect(inboxRow(page, escalating)).toBeVisible();
  // The thread page says it too: overdue since when, escalated when (and to whom, when a target is set up).
  await page.goto(`/threads/${escalating}`);
  const deadline = page
    .locator('[data-testid="ledger-entry"][data-status="pending"]')
    .getByTestId("deadline");
  await expect(deadline).toHaveAttribute("data-escalated", "true");
  await expect(deadline).toHaveAttribute("data-overdue", "true");
  await expect(deadline).toContainText("Overdue since");
  await expect(deadline).toContainText("escalated");

  const supervisor = await apiAs("supervisor");
  const audit = await (
    await supervisor.get(`/api/audit?action=decision_escalated&threadId=${escalating}`)
  ).json();
  expect(audit.items ?? audit.entries).toHaveLength(1);

  // 2. Now with an expiry answer: the runtime rejects it, as system:expiry, through the ledger.
  await setPolicy({
    dueSeconds: 2,
    expiryAnswer: {
      status: "resolved",
      payload: { decision: "reject", note: "No decision within the deadline." },
    },
  });
  const expiring = await pausedThread(page, `Refund ${second}, it broke.`, { orderRef: second });
  await expect
    .poll(
      async () =>
        (await threadState(page, expiring)).decisions.find(
          (d: { action: string }) => d.action === "refund_approval",
        ),
      { timeout: 20_000 },
    )
    .toMatchObject({ status: "resolved", resolvedBy: "system:expiry", answer: { decision: "reject" } });
  await expect(inboxRow(page, expiring)).toHaveCount(0);
  const decided = await (await supervisor.get(`/api/audit?action=decision&threadId=${expiring}`)).json();
  expect(JSON.stringify(decided)).toContain("system:expiry");
  await supervisor.dispose();
});
