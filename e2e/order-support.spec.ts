import { expect, openReady, pausedTicketOf, test, threadState } from "./fixtures";
import { inboxRow, openLiveInbox } from "./support/queue";

/*
 * The fourth agent in the browser: a LangChain createAgent whose store-credit tool is reviewed through the standard
 * humanInTheLoopMiddleware. The page renders the reviewed call from the middleware's request alone (tool, description,
 * arguments, an edit form built from the tool's schema), the operator edits the amount and approves, the credit is
 * recorded and delivered once, and the reply says what was recorded. ORD-1001 (€24.98): the agent proposes €2.50.
 */
test("order support: a reviewed tool call, edited and approved from its card; one credit; the reply says so", async ({
  page,
}) => {
  const message = "The mugs from ORD-1001 arrived chipped.";
  const threadId = await pausedTicketOf(page, "order_support", message);

  // The inbox row says the money the reviewed call moves, in the order's currency (it said "—" before: a call
  // names its amount, not its currency), and an empty cell reads the same everywhere ("—", never "–").
  await openLiveInbox(page, "action=tool_review&limit=200");
  const row = inboxRow(page, threadId);
  await expect(row.getByTestId("row-amount")).toHaveText("€2.50");
  expect(await page.getByTestId("inbox").textContent()).not.toContain("–");

  await openReady(page, `/threads/${threadId}`, "thread-page");
  const card = page.getByTestId("decision-tool_review");
  const call = card.getByTestId("tool-call-card");
  await expect(call).toContainText("issue_store_credit");
  // Money is said as money (2.50, not 250 cents), and nothing is chosen for the operator on a call that moves it.
  await expect(call.getByTestId("tool-call-args").locator('[data-arg="amountCents"]')).toHaveText("2.50");
  await expect(call.getByTestId("tool-call-args")).toContainText("Amount");
  await expect(call.getByTestId("tool-decision-approve")).not.toBeChecked();
  await expect(card.getByTestId("submit-review")).toBeDisabled();

  // An amount outside the tool's schema is refused on the page, in words and money, before anything is sent.
  await call.getByTestId("tool-decision-edit").check();
  const amount = call.getByTestId("tool-arg-amountCents");
  await expect(amount).toHaveValue("2.50");
  await expect(call).toContainText("(1.00 to 200.00)");
  await amount.fill("999.99");
  await card.getByTestId("submit-review").click();
  await expect(card).toContainText("Amount of issue_store_credit must be at most 200.00.");
  expect((await threadState(page, threadId)).pendingInterrupts).toHaveLength(1);

  await amount.fill("2.00");
  await card.getByTestId("submit-review").click();
  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  await expect(page.getByText("Store credit of €2.00 has been queued")).toBeVisible();
  // The side effect is named as what it is: store credit, never "Refund".
  const payment = page.getByTestId("effect").filter({ hasText: "€2.00" });
  await expect(payment).toContainText("Store credit €2.00 for ORD-1001");
  await expect(page.getByTestId("effects")).not.toContainText("Refund €");
  // The credit is this branch's (the tool's result names it): the page claims no disagreement between branches.
  await expect(page.getByTestId("ledger-contradictions")).toHaveCount(0);

  const state = await threadState(page, threadId);
  expect(state.decisions).toMatchObject([{ action: "tool_review", status: "resolved" }]);
  const credits = (state.effects as { kind: string }[]).filter((e) => e.kind === "payment");
  expect(credits).toHaveLength(1);
  await page.screenshot({ path: test.info().outputPath("order-support.png"), fullPage: true });
});
