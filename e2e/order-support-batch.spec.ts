import pg from "pg";
import { expect, openReady, pausedTicketOf, storageStatePath, test, threadState } from "./fixtures";
import { lateOrders, suiteDatabaseUrl } from "./support/queue";

/** Two orders of one customer (a thread pays only its own customer: another's order is held, never paid). */
async function twoOrdersOfOneCustomer(): Promise<[string, string]> {
  const [first, second] = (await lateOrders(7770, 2, 4_000)) as [string, string];
  if (process.env.E2E_DATABASE === "pglite") return [first, second];
  const client = new pg.Client({ connectionString: suiteDatabaseUrl() });
  await client.connect();
  try {
    await client.query(
      `UPDATE orders SET customer_name = o.customer_name, customer_email = o.customer_email
         FROM orders o WHERE o.id = $1 AND orders.id = $2`,
      [first, second],
    );
  } finally {
    await client.end();
  }
  return [first, second];
}

/*
 * A reviewed batch, answered in part (issue 53): a customer writes about two orders; the order-support createAgent
 * proposes a store credit for each in one batch, reviewed on one card. The operator approves one and rejects the
 * other. LangChain's middleware runs none of a batch with a refusal — so the card says so before the click, the
 * ledger says the approval did not run, nothing is paid, and the agent proposes the credit nobody refused again,
 * for its own review (by someone else: four-eyes), after which exactly that one credit is recorded.
 */
test("two credits in one batch, one approved and one rejected: the card says none runs, the agent asks again for the approved one", async ({
  page,
  browser,
}) => {
  test.slow();
  const [first, second] = await twoOrdersOfOneCustomer();
  const message = `The mug from ${first} and the lamp from ${second} both arrived broken.`;
  const threadId = await pausedTicketOf(page, "order_support", message);

  await openReady(page, `/threads/${threadId}`, "thread-page");
  const card = page.getByTestId("decision-tool_review");
  const calls = card.getByTestId("tool-call-card");
  await expect(calls).toHaveCount(2);
  await expect(calls.nth(0)).toContainText(first);
  await expect(calls.nth(1)).toContainText(second);
  await calls.nth(0).getByTestId("tool-decision-approve").check();
  await expect(card.getByTestId("batch-sent-back")).toHaveCount(0);
  await calls.nth(1).getByTestId("tool-decision-reject").check();
  await calls.nth(1).getByTestId("tool-decision-message").fill(`${second} was credited by phone already.`);
  // Before the click: the approved call will not run now.
  await expect(card.getByTestId("batch-sent-back")).toContainText("the ones you approve will not run now");
  await card.getByTestId("submit-review").click();

  // The agent is asked again: one call, the credit nobody refused.
  await expect
    .poll(
      async () => {
        const s = await threadState(page, threadId);
        return s.pendingInterrupts.map((p: { payload: { requests: { args: { orderId: string } }[] } }) =>
          p.payload.requests.map((r) => r.args.orderId),
        );
      },
      { timeout: 30_000 },
    )
    .toEqual([[first]]);
  // Nothing ran: no credit, no payment; the ledger says the approval did not run.
  const between = await threadState(page, threadId);
  expect(between.effects.filter((e: { kind: string }) => e.kind === "payment")).toHaveLength(0);
  const answered = page.locator('[data-testid="ledger-entry"][data-status="resolved"]');
  await expect(answered.getByTestId("ledger-answer")).toContainText(
    "Approved (not run: the batch went back to the agent)",
  );
  await expect(answered.getByTestId("ledger-answer")).toContainText(
    `Rejected: “${second} was credited by phone already.”`,
  );

  // Someone who did not answer the first batch approves the credit proposed again.
  const admin = await browser.newContext({ storageState: storageStatePath("admin") });
  const other = await admin.newPage();
  await openReady(other, `/threads/${threadId}`, "thread-page");
  const again = other.getByTestId("decision-tool_review");
  await expect(again.getByTestId("tool-call-card")).toHaveCount(1);
  await again.getByTestId("tool-decision-approve").check();
  await again.getByTestId("submit-review").click();
  await expect(other.getByTestId("status-badge")).toHaveText("Completed", { timeout: 30_000 });
  await expect(other.getByTestId("thread-page")).toContainText(
    `We will not add store credit for ${second} this time.`,
  );
  await admin.close();

  const end = await threadState(page, threadId);
  const credits = end.effects.filter((e: { kind: string }) => e.kind === "payment");
  expect(credits).toHaveLength(1);
});
