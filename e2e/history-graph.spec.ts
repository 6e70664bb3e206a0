import type { Page } from "@playwright/test";
import { expect, openReady, pausedAccountChange, pausedThread, test } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 34: the history page draws the agent's graph (from the thread version's compiled graph, laid out by dagre)
 * and places the selected step on it — the node that wrote it, the node that runs next, the nodes that ask a person —
 * for the refund agent and the account-change agent (two parallel reviews), in both themes at 1280 and 390 px: the
 * picture scrolls inside its own box, the page never overflows, axe finds nothing serious.
 */

const node = (page: Page, id: string) => page.locator(`[data-testid="agent-graph"] [data-node="${id}"]`);

async function selectParent(page: Page) {
  await page.getByTestId("checkpoint-detail").getByRole("button").first().click();
}

test("refund: the paused step sits after check_policy, human_review runs next and asks a person", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe
  const threadId = await pausedThread(page, "The running shoes from ORD-1010 fell apart. Please refund me.", {
    orderRef: "ORD-1010",
  });
  await openReady(page, `/threads/${threadId}/history`, "history");
  const graph = page.getByTestId("agent-graph");
  await expect(graph).toHaveAttribute("data-agent", "refund");
  // Every node that asks a person is marked; the edges out of classify are conditional.
  for (const asks of ["ask_order", "human_review", "choose_method", "confirm_email"])
    await expect(node(page, asks)).toHaveAttribute("data-asks", "true");
  await expect(node(page, "classify")).toHaveAttribute("data-asks", "false");
  await expect(graph.locator('[data-edge="classify→lookup_order"]')).toHaveAttribute(
    "data-conditional",
    "true",
  );
  await expect(graph.locator('[data-edge="__start__→classify"]')).toHaveAttribute(
    "data-conditional",
    "false",
  );

  // The head: written by the policy check, the approval next.
  await expect(node(page, "check_policy")).toHaveAttribute("data-state", "current");
  await expect(node(page, "human_review")).toHaveAttribute("data-state", "next");
  await expect(graph.locator("figcaption")).toContainText("written by check_policy; next: human_review");

  // One step back: the order lookup wrote it, the policy check ran next.
  await selectParent(page);
  await expect(node(page, "lookup_order")).toHaveAttribute("data-state", "current");
  await expect(node(page, "check_policy")).toHaveAttribute("data-state", "next");
  await expect(node(page, "human_review")).toHaveAttribute("data-state", "other");

  await checkScreens(page, testInfo, "history-graph-refund");
});

test("account change: two reviews run next at once, each marked as asking a person", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe
  const threadId = await pausedAccountChange(page);
  await openReady(page, `/threads/${threadId}/history`, "history");
  const graph = page.getByTestId("agent-graph");
  await expect(graph).toHaveAttribute("data-agent", "account_change");
  for (const review of ["fraud_review", "data_review"]) {
    await expect(node(page, review)).toHaveAttribute("data-asks", "true");
    await expect(node(page, review)).toHaveAttribute("data-state", "next");
  }
  // The picture is in a box of its own: at 390 px it scrolls there, and the page does not.
  await page.setViewportSize({ width: 390, height: 900 });
  const box = page.getByTestId("agent-graph-scroll");
  const sizes = await box.evaluate((el) => ({ client: el.clientWidth, scroll: el.scrollWidth }));
  expect(sizes.client).toBeLessThanOrEqual(390);
  expect(
    await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
  ).toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1280, height: 900 });

  await checkScreens(page, testInfo, "history-graph-account-change");
});
