import { expect, pausedThread, test } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 3: the reject note is internal. The form has a separate "Message to the customer"; the drafted
 * email carries that message and never the note, and the note field says so.
 */

test("the internal note stays internal; only the message to the customer reaches the draft", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(
    page,
    "I changed my mind about the lamp from ORD-1006. Refund please.",
    {
      orderRef: "ORD-1006",
    },
  );
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const card = page.getByTestId("decision-refund_approval");
  await expect(card.getByText("never sent to the customer")).toBeVisible();
  await card.getByLabel("Internal note").fill("Third late claim this year, watch this account.");
  await card
    .getByLabel("Message to the customer")
    .fill("Our 30-day return window has passed for this order.");
  await expect(card.getByTestId("length-counter").first()).toHaveText("47 / 2,000 characters");
  // A refresh keeps what was typed (the tab's own draft).
  await page.reload();
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await expect(card.getByLabel("Internal note")).toHaveValue(
    "Third late claim this year, watch this account.",
  );
  await expect(card.getByLabel("Message to the customer")).toHaveValue(
    "Our 30-day return window has passed for this order.",
  );
  await checkScreens(page, testInfo, "approval-form");
  await card.getByTestId("reject").click();

  const email = page.getByTestId("decision-confirm_email");
  await expect(email).toBeVisible({ timeout: 20_000 });
  const body = email.getByTestId("email-body");
  await expect(body).toHaveValue(/Our 30-day return window has passed for this order\./);
  await expect(body).not.toHaveValue(/Third late claim/);
  await checkScreens(page, testInfo, "email-draft");

  // The note is kept with the decision (internal history), the customer message with it.
  const ledger = page.getByTestId("ledger-entry").filter({ hasText: "Refund approval" });
  await expect(ledger).toContainText("Third late claim");
});
