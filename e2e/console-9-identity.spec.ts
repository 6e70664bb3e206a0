import { expect, pausedThread, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 9: a ticket without an order plus any typed order number must not email that order's customer
 * with no identity check. The agent acts on an order only when the ticket came with it or the customer's message
 * names it; an order number typed by an operator waits for a person to say the sender is that order's customer.
 */

test("an order number typed for a ticket without one: nothing is refunded or emailed until a person checks the sender", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(page, "Hello, the T-shirts arrived damaged and I want my money back.");
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const ask = page.getByTestId("decision-input_text");
  await ask.getByLabel(/order/i).fill("ORD-1003");
  await ask.getByTestId("submit-text").click();

  // ORD-1003 is Sofia Rossi's and would be refunded by policy: the agent asks who the sender is first.
  const identity = page.getByTestId("decision-select_option");
  await expect(identity).toContainText("Is the sender Sofia Rossi?", { timeout: 20_000 });
  await expect(identity.getByRole("radio", { checked: true })).toHaveCount(0); // no default to click through
  let state = await threadState(page, threadId);
  expect(state.values.refund).toBeNull();
  expect(state.values.email).toBeNull();
  await checkScreens(page, testInfo, "identity-question");

  await identity.getByTestId("option-sender_unknown").check();
  await identity.getByTestId("submit-option").click();
  // Not confirmed: no refund, no email to Sofia, and the ticket stays with a person.
  const task = page.getByTestId("decision-select_option").filter({ hasText: "Reply to the customer" });
  await expect(task).toBeVisible({ timeout: 20_000 });
  state = await threadState(page, threadId);
  expect(state.status).toBe("interrupted");
  expect(state.values.refund).toBeNull();
  expect(state.values.order).toBeNull();
  expect(JSON.stringify(state.values.reply)).not.toContain("Sofia");
  await checkScreens(page, testInfo, "identity-not-confirmed");
});
