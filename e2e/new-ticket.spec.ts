import type { Page } from "@playwright/test";
import { expect, test, threadState } from "./fixtures";

/*
 * New ticket: the form creates the thread, starts its first run (an AG-UI RunAgentInput with the customer's
 * message) without waiting for the whole run, and opens the thread page.
 */

async function openForm(page: Page) {
  await page.goto("/threads/new");
  await expect(page.getByTestId("new-ticket")).toHaveAttribute("data-ready", "true");
}

test("creates a ticket for ORD-1002, starts the agent and lands on a thread paused for a refund approval", async ({
  page,
}) => {
  await openForm(page);
  const order = page.getByTestId("ticket-order");
  // "No order" first, then the shop's orders: the 12 demo orders, and any another spec of the suite added before.
  await expect(order.locator('option[value="ORD-1012"]')).toHaveCount(1);
  const values = await order
    .locator("option")
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(values[0]).toBe("");
  expect(values).toEqual(expect.arrayContaining(Array.from({ length: 12 }, (_, i) => `ORD-${1001 + i}`)));
  await order.selectOption("ORD-1002");
  await expect(page.locator("#ticket-order-help")).toContainText("paid by card");
  await page.getByRole("button", { name: "Use a sample message" }).click();
  await expect(page.getByLabel("Customer message")).toHaveValue(/ORD-1002/);

  const message = "Hello, my wireless headphones stopped charging after a week. I would like a refund.";
  await page.getByLabel("Customer message").fill(message);
  await page.getByTestId("ticket-submit").click();

  await expect(page).toHaveURL(/\/threads\/[0-9a-f-]{36}$/);
  const threadId = new URL(page.url()).pathname.split("/").pop() ?? "";
  await expect
    .poll(async () =>
      (await threadState(page, threadId)).pendingInterrupts.map((p: { action: string }) => p.action),
    )
    .toEqual(["refund_approval"]);
  const state = await threadState(page, threadId);
  expect(state.status).toBe("interrupted");
  expect(state.orderRef).toBe("ORD-1002");
  expect(state.values.customerMessage).toBe(message);
  expect(state.pendingInterrupts[0].payload.requested.amountCents).toBe(24_900);
});

test("keeps the operator on the form with a readable error when the ticket is refused", async ({ page }) => {
  await openForm(page);
  // The server refuses messages over 5000 characters; the form caps what can be typed, so go around it.
  await page.locator("#ticket-message").evaluate((el) => el.removeAttribute("maxlength"));
  await page.getByLabel("Customer message").fill("x".repeat(5001));
  await page.getByTestId("ticket-submit").click();
  await expect(page.getByTestId("ticket-error")).toContainText("5000");
  await expect(page).toHaveURL(/\/threads\/new$/);
  await expect(page.getByTestId("ticket-submit")).toBeEnabled();
  await expect(page.getByLabel("Customer message")).toHaveValue("x".repeat(5001));
});
