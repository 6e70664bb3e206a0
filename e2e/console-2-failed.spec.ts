import type { Page } from "@playwright/test";
import { answerOverApi, expect, pausedThread, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";
import { onServerDb } from "./support/shop-db";

/*
 * Issue 12, point 2: a thread whose run crashes says why, in the operator's words, with what to do; "Try again" is
 * what the page offers and it is not refused; and the decision the thread waited for before the crash (its reply)
 * does not stay in the inbox as an item nobody can act on. The crash is real: a fork looks the order up again, and
 * its currency code was corrupted in the shop's database, so the policy step throws.
 */

const ORDER = "ORD-1005";

async function pendingActions(page: Page, threadId: string) {
  return (await threadState(page, threadId)).pendingInterrupts.map((p: { action: string }) => p.action);
}

async function inboxThreadIds(page: Page): Promise<string[]> {
  const res = await page.request.get("/api/threads?limit=200");
  expect(res.status()).toBe(200);
  return (await res.json()).items.map((i: { thread: { threadId: string } }) => i.thread.threadId);
}

test("a crashed fork says why, leaves no ghost in the inbox, and Try again is not refused", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(page, `The novels from ${ORDER} arrived wet. Refund please.`, {
    orderRef: ORDER,
  });
  // Gift card: the agent asks how to pay back (store credit), then the reply waits for its confirmation.
  for (let i = 0; i < 3; i++) {
    const [action] = await pendingActions(page, threadId);
    if (action === "refund_approval") await answerOverApi(page, threadId, action, { decision: "approve" });
    else if (action === "select_option") {
      const payload = (await threadState(page, threadId)).pendingInterrupts[0].payload;
      await answerOverApi(page, threadId, action, { optionId: payload.options[0].id });
    } else break;
  }
  expect(await pendingActions(page, threadId)).toEqual(["confirm_email"]);
  expect(await inboxThreadIds(page)).toContain(threadId);

  const history = await (await page.request.get(`/api/threads/${threadId}/history?limit=200`)).json();
  const lookup = history.checkpoints.find(
    (c: { writtenBy: { kind: string; nodes?: string[] } }) =>
      c.writtenBy.kind === "nodes" && c.writtenBy.nodes?.includes("lookup_order"),
  );
  expect(lookup).toBeDefined();

  await onServerDb("UPDATE orders SET currency = 'Z' WHERE id = $1", [ORDER]);
  try {
    const fork = await page.request.post(`/api/threads/${threadId}/fork`, {
      data: { checkpointId: lookup.checkpointId, values: { reason: "second look" }, asNode: "classify" },
    });
    expect(fork.status()).toBe(202);
    await expect
      .poll(async () => (await threadState(page, threadId)).status, { timeout: 20_000 })
      .toBe("failed");
  } finally {
    await onServerDb("UPDATE orders SET currency = 'EUR' WHERE id = $1", [ORDER]);
  }

  // No decision waits any more: nothing of this thread sits in the inbox.
  expect(await pendingActions(page, threadId)).toEqual([]);
  expect(await inboxThreadIds(page)).not.toContain(threadId);

  // The page says why and what to do, in words; the code is a details line for support.
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const failure = page.getByTestId("run-error");
  await expect(failure).toContainText("The run failed: The agent stopped: one of its steps failed.");
  await expect(failure).toContainText("Try again");
  await expect(failure.getByTestId("error-details")).toHaveText("Details for support: internal · run_failed");
  await checkScreens(page, testInfo, "failed");

  // Try again is what the page offers, and the server does not refuse it: the run starts again (from the last saved
  // step — the corrupted order is in that step's state, so it fails again, and says so again).
  const retried = page.waitForResponse((r) => r.url().endsWith(`/api/threads/${threadId}/runs`));
  await page.getByTestId("retry-run").click();
  expect((await retried).status()).toBe(200);
  await expect(page.getByTestId("server-error")).toHaveCount(0);
  await expect(page.getByTestId("run-error")).toContainText("one of its steps failed", { timeout: 20_000 });
  expect(await pendingActions(page, threadId)).toEqual([]);
});
