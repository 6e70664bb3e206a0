import { expect, openReady, pausedTicketOf, test, threadState } from "./fixtures";

/*
 * An agent package in the browser (examples/invoice-agent, added by one line in agents.config.json): a LangChain
 * createAgent whose credit note is reviewed as LangChain's docs write it, `interruptOn: { issue_credit_note: true }`.
 * The review carries the tool's argument schema, so the card's edit is a form generated from it (no JSON box): the
 * operator lowers the amount, the edited arguments are what the tool runs with, and the reply says that amount.
 */
test("agent package: a createAgent tool reviewed with { tool: true } is edited through a generated form", async ({
  page,
}) => {
  const threadId = await pausedTicketOf(
    page,
    "invoice_dispute",
    "The late fee on INV-2002 is wrong, I paid on time.",
  );

  await openReady(page, `/threads/${threadId}`, "thread-page");
  const card = page.getByTestId("decision-tool_review");
  const call = card.getByTestId("tool-call-card");
  await expect(call).toContainText("issue_credit_note");
  await expect(call.getByTestId("tool-call-args").locator('[data-arg="amountCents"]')).toHaveText("19.00");

  await call.getByTestId("tool-decision-edit").check();
  // A field per argument of the tool's schema, with its bounds; never a raw JSON box.
  const amount = call.getByTestId("tool-arg-amountCents");
  await expect(amount).toHaveValue("19.00");
  await expect(call.getByTestId("tool-arg-note")).toBeVisible();
  await expect(call.locator(`textarea[id$="-json"]`)).toHaveCount(0);
  await amount.fill("2000.00");
  await card.getByTestId("submit-review").click();
  await expect(card).toContainText("Amount of issue_credit_note must be at most 1000.00.");
  expect((await threadState(page, threadId)).pendingInterrupts).toHaveLength(1);

  await amount.fill("15.00");
  await call.getByTestId("tool-arg-note").fill("Late fee waived as a courtesy");
  await card.getByTestId("submit-review").click();
  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  await expect(
    page.getByText("A colleague approved a credit note of €15.00 against INV-2002. It is not issued yet"),
  ).toBeVisible();

  const state = await threadState(page, threadId);
  expect(state.decisions).toMatchObject([{ action: "tool_review", status: "resolved" }]);
  const [decision] = state.decisions as { answer: unknown }[];
  expect(JSON.stringify(decision?.answer)).toContain('"amountCents":1500');
  await page.screenshot({ path: test.info().outputPath("agent-package.png"), fullPage: true });
});
