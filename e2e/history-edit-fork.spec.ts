import { randomUUID } from "node:crypto";
import { createTicket, expect, pausedThread, runOverApi, test, threadState } from "./fixtures";
import { lateOrders } from "./support/queue";

/*
 * Time travel with an edit, in the browser: a thread paused at its refund approval is forked from the history page
 * with the customer's reason and the requested amount changed; the branch runs to the approval again with the edit,
 * and the fork's checkpoint shows the change in its diff. On the embedded database this request used to hang the
 * whole console ("Forking…" for ever); npm test runs this spec there too.
 */
test("edits the request on a fork from the history page: the branch asks again with the edit, the diff shows it", async ({
  page,
}) => {
  const message = "The rain jacket from ORD-1011 leaks at the seams. Please refund it.";
  const threadId = await createTicket(page, message, "ORD-1011");
  await runOverApi(
    page,
    threadId,
    { messages: [{ id: randomUUID(), role: "user", content: message }] },
    { intake: true },
  );
  const paused = await threadState(page, threadId);
  expect(paused.pendingInterrupts.map((p: { action: string }) => p.action)).toEqual(["refund_approval"]);
  const approval = paused.checkpointId as string;

  await page.goto(`/threads/${threadId}/history`);
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("checkpoint-detail")).toHaveAttribute("data-checkpoint-id", approval);

  await page.getByLabel("Edit the state before forking").check();
  await page
    .getByLabel("State changes (JSON object)")
    .fill('{"requested": 5000, "reason": "Only one seam leaks."}');
  await page.getByLabel("Apply as if this node wrote it (optional)").selectOption("lookup_order");
  const response = page.waitForResponse((r) => r.url().endsWith(`/api/threads/${threadId}/fork`));
  await page.getByTestId("fork-submit").click();
  const forked = await (await response).json();
  expect((await response).status()).toBe(202);
  await expect(page.getByTestId("fork-result")).toContainText("New branch started from step", {
    timeout: 15_000,
  });

  // The branch runs to the approval again, asking about the edited amount.
  await expect
    .poll(async () => {
      const state = await threadState(page, threadId);
      return state.pendingInterrupts.map((p: { action: string }) => p.action);
    })
    .toEqual(["refund_approval"]);
  const branch = await threadState(page, threadId);
  expect(branch.checkpointId).not.toBe(approval);
  expect(branch.values).toMatchObject({ requested: 5000, reason: "Only one seam leaks." });

  // The fork's own checkpoint: its diff against the one forked from is the edit.
  const row = page.locator(
    `[data-testid="checkpoint-row"][data-checkpoint-id="${forked.checkpointId as string}"] button`,
  );
  await expect(row).toBeVisible({ timeout: 15_000 });
  await row.click();
  const diff = page.getByTestId("checkpoint-diff");
  await expect(diff.locator('[data-key="requested"]')).toContainText("5000");
  await expect(diff.locator('[data-key="reason"]')).toContainText("Only one seam leaks.");
});

test("the fork form comes from the agent's editable state: each field starts at its value, wrong values are refused while typing in the server's words, the JSON box follows", async ({
  page,
}) => {
  const [order] = await lateOrders(7730, 1, 3930);
  const threadId = await pausedThread(page, `Refund ${order} please, the zip broke.`, { orderRef: order });
  const approval = (await threadState(page, threadId)).checkpointId as string;
  await page.goto(`/threads/${threadId}/history`);
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("checkpoint-detail")).toHaveAttribute("data-checkpoint-id", approval);
  await page.getByLabel("Edit the state before forking").check();

  const form = page.getByTestId("fork-form");
  const field = (name: string) => form.locator(`[data-testid="fork-field"][data-field="${name}"]`);
  await expect(form.getByTestId("fork-field")).toHaveCount(5);
  await expect(field("orderRef").locator("input")).toHaveValue(order ?? "");
  await expect(field("intent").locator("select")).toHaveValue("refund");
  const submit = page.getByTestId("fork-submit");
  const json = page.getByLabel("State changes (JSON object)");

  // Words in the amount: refused as typed, and the fork stays closed.
  const requested = field("requested").locator("input");
  await requested.fill("lots");
  await expect(field("requested").getByTestId("fork-field-error")).toHaveText(
    "Amount asked for must be an amount such as 12.50",
  );
  // The amount is typed in the order's currency, never in cents.
  await expect(field("requested").locator("label")).toContainText("(in EUR; empty: none)");
  await expect(submit).toBeDisabled();
  // A number out of bounds, and an order number in the wrong form: the server's rules, in the agent's words, as typed.
  await requested.fill("0");
  await expect(field("requested").getByTestId("fork-field-error")).toHaveText(
    "Amount asked for must be more than 0",
  );
  await expect(submit).toBeDisabled();
  await field("orderRef").locator("input").fill("ORD-12");
  await expect(field("orderRef").getByTestId("fork-field-error")).toHaveText(
    "Order number must look like ORD-1234",
  );
  await field("orderRef")
    .locator("input")
    .fill(order ?? "");
  // More than the order's total: refused with the total, in money.
  await requested.fill("999999.99");
  await expect(field("requested").getByTestId("fork-field-error")).toHaveText(
    "Amount asked for must be at most the order's total, €39.30",
  );
  await expect(submit).toBeDisabled();
  await requested.fill("12");
  // The amount is said back as money beside it; the state (the JSON box) holds it in cents.
  await expect(field("requested").getByTestId("fork-field-money")).toHaveText("= €12.00");
  await expect(field("requested").getByTestId("fork-field-error")).toHaveText("");
  await expect(field("orderRef").getByTestId("fork-field-error")).toHaveText("");
  await expect(submit).toBeEnabled();
  await expect(json).toHaveValue(/"requested": 1200/);

  // The JSON box (the advanced view) is held to the same rules.
  await json.fill('{"requested": "lots"}');
  await expect(page.locator("#fork-values-help")).toContainText("requested must be a number");
  await expect(submit).toBeDisabled();
  await json.fill('{"requested": 1200}');
  await expect(submit).toBeEnabled();

  await page.getByLabel("Apply as if this node wrote it (optional)").selectOption("lookup_order");
  await submit.click();
  await expect(page.getByTestId("fork-result")).toContainText("New branch started from step", {
    timeout: 15_000,
  });
  await expect
    .poll(async () => (await threadState(page, threadId)).values.requested, { timeout: 15_000 })
    .toBe(1200);
});
