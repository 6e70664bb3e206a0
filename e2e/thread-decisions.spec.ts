import { emailOf, expect, openReady, pausedThread, storageStatePath, test, threadState } from "./fixtures";
import { lateOrders, openLiveInbox } from "./support/queue";

/*
 * The thread page's decision flows, one fresh thread per test. Tickets are created and their first run is started
 * through the API with the intake key (the page is what is under test); every decision is then taken on the page, as
 * the signed-in supervisor.
 */

const me = emailOf("supervisor");

/** Cents as the page shows them. Orders are shared by every spec's threads, so a refund may be one recorded earlier. */
const euros = (cents: number) =>
  new Intl.NumberFormat("en-IE", { style: "currency", currency: "EUR" }).format(cents / 100);

test("approve, then send the drafted email: the thread finishes with its refund and the sent email", async ({
  page,
}) => {
  const threadId = await pausedThread(page, "My headphones from ORD-1002 are broken, please refund them.");
  await openReady(page, `/threads/${threadId}`, "thread-page");
  await expect(page.getByTestId("signed-in-as")).toContainText(`${me} · supervisor`);
  const approval = page.getByTestId("decision-refund_approval");
  await expect(approval).toContainText("ORD-1002");
  await expect(approval.getByTestId("requested-amount")).toHaveText("€249.00");
  await expect(approval.getByTestId("policy-findings")).toContainText("automatic approval limit");
  await approval.getByTestId("approve").click();

  // The reply streams in, then the email waits for confirmation.
  const email = page.getByTestId("decision-confirm_email");
  await expect(email).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId("message").filter({ hasText: "Hello Lars Jensen" })).toBeVisible();
  await expect(page.getByTestId("tool-call").filter({ hasText: "lookup_order" })).toContainText("ORD-1002");
  await email.getByTestId("send-as-is").click();

  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  // The state says queued; the page shows the delivery's live status (the dispatcher sends it after the run).
  // The suite's server writes email to files (no SMTP_URL): the page says it was simulated, never "Delivered".
  await expect(page.getByTestId("email-outcome")).toContainText(
    "Simulated: no mail server is set, written to a file: “Your refund (ORD-1002)”",
    {
      timeout: 20_000,
    },
  );
  await expect(page.getByTestId("ledger-entry")).toHaveCount(2);
  await expect(page.getByTestId("ledger")).toContainText(`Approved — by ${me}`);

  const state = await threadState(page, threadId);
  expect(state.status).toBe("completed");
  expect(state.values.decision).toMatchObject({ decision: "approve", amountCents: 24900 });
  expect(state.values.refund).toMatchObject({ orderId: "ORD-1002" });
  await expect(page.getByTestId("refund-outcome")).toContainText(euros(state.values.refund.amountCents));
  expect(state.values.email).toMatchObject({ status: "queued" });
  expect(state.decisions.map((d: { resolvedBy: string }) => d.resolvedBy)).toEqual([me, me]);
  expect(state.values.decision).toMatchObject({ operatorId: me });
});

test("reject needs a note; rejected with one, no refund is made", async ({ page }) => {
  const threadId = await pausedThread(page, "Refund please for ORD-1006, the lamp is not what I ordered.");
  await openReady(page, `/threads/${threadId}`, "thread-page");
  const approval = page.getByTestId("decision-refund_approval");
  await expect(approval.getByTestId("policy-findings")).toContainText("block");

  let posted = 0;
  page.on("request", (r) => {
    if (r.method() === "POST" && r.url().endsWith("/runs")) posted += 1;
  });
  await approval.getByTestId("reject").click();
  await expect(approval.getByRole("alert")).toHaveText("Say why the refund is rejected.");
  await expect(approval.getByTestId("decision-note")).toBeFocused();
  expect(posted).toBe(0);

  await approval.getByTestId("decision-note").fill("Outside the 30-day return window.");
  await approval.getByTestId("reject").click();
  const email = page.getByTestId("decision-confirm_email");
  await expect(email).toBeVisible({ timeout: 20_000 });
  await email.getByTestId("dont-send").click();
  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  await expect(page.getByTestId("refund-outcome")).toContainText("None: the refund was rejected.");
  await expect(page.getByTestId("email-outcome")).toContainText("Not sent");
  await expect(page.getByTestId("ledger")).toContainText("Rejected: “Outside the 30-day return window.”");

  const state = await threadState(page, threadId);
  expect(state.values.decision).toMatchObject({
    decision: "reject",
    note: "Outside the 30-day return window.",
  });
  expect(state.values.refund).toBeNull();
  expect(posted).toBe(2);
});

test("approve a smaller amount: the amount is checked on the page, then refunded", async ({ page }) => {
  const threadId = await pausedThread(page, "The headphones from ORD-1002 have a scratch, I want a refund.");
  await openReady(page, `/threads/${threadId}`, "thread-page");
  const approval = page.getByTestId("decision-refund_approval");
  const amount = approval.getByTestId("partial-amount");
  await amount.fill("1,299.00");
  await approval.getByTestId("approve-partial").click();
  await expect(approval.getByRole("alert")).toContainText("Enter an amount such as");
  await amount.fill("300");
  await approval.getByTestId("approve-partial").click();
  await expect(approval.getByRole("alert")).toContainText("must be less than €249.00");
  await amount.fill("100.00");
  await approval.getByTestId("approve-partial").click();

  await expect(page.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId("ledger")).toContainText("Approved €100.00 (a smaller amount)");
  const state = await threadState(page, threadId);
  expect(state.values.decision).toMatchObject({ decision: "approve_partial", amountCents: 10000 });
  expect(state.values.refund).toMatchObject({ orderId: "ORD-1002" });
  await expect(page.getByTestId("refund-outcome")).toContainText(euros(state.values.refund.amountCents));
  const decided = state.decisions.find((d: { action: string }) => d.action === "refund_approval");
  expect(decided.answer).toEqual({ decision: "approve_partial", amountCents: 10000 });
});

test("answers input_text, select_option and confirm_email (edited) on one thread", async ({
  page,
  browser,
}) => {
  const threadId = await pausedThread(page, "I would like a refund for my backpack, it tore on day two.");
  // An operator names the order; four-eyes leaves its refund to someone else (the supervisor's page below).
  const operator = await browser.newContext({ storageState: storageStatePath("operator") });
  const asker = await operator.newPage();
  await openReady(asker, `/threads/${threadId}`, "thread-page");

  const ask = asker.getByTestId("decision-input_text");
  const text = ask.getByLabel(/order/i);
  // The payload's pattern reaches the input (the browser checks it too); any letter case is an order number.
  await expect(text).toHaveAttribute("pattern", /\[Oo\]\[Rr\]\[Dd\]/);
  await text.fill("my backpack order");
  await ask.getByTestId("submit-text").click();
  await expect(ask.getByRole("alert")).toBeVisible();
  await expect(text).toHaveAttribute("aria-invalid", "true");
  await text.fill("ord-1004");
  await ask.getByTestId("submit-text").click();
  // A typed order number is not the sender's word: the operator says they checked the sender is its customer.
  const identity = asker.getByTestId("decision-select_option");
  await expect(identity).toContainText("Is the sender", { timeout: 20_000 });
  await identity.getByTestId("option-sender_is_customer").check();
  await identity.getByTestId("submit-option").click();
  await expect(asker.getByTestId("decision-refund_approval")).toBeVisible({ timeout: 20_000 });
  await operator.close();

  await openReady(page, `/threads/${threadId}`, "thread-page");
  const approval = page.getByTestId("decision-refund_approval");
  await expect(approval).toContainText("ORD-1004", { timeout: 20_000 });
  await approval.getByTestId("approve").click();

  const method = page.getByTestId("decision-select_option");
  await expect(method).toBeVisible({ timeout: 20_000 });
  await expect(method.getByRole("radio", { name: /Original payment method/ })).toBeChecked();
  await method.getByRole("radio", { name: /Store credit/ }).check();
  await method.getByTestId("submit-option").click();

  const email = page.getByTestId("decision-confirm_email");
  await expect(email).toBeVisible({ timeout: 20_000 });
  await expect(email.getByTestId("send-edited")).toBeDisabled();
  await email.getByTestId("email-subject").fill("Your store credit for ORD-1004");
  await email
    .getByTestId("email-body")
    .fill("Hello Tom,\n\nYour store credit is on your account.\n\nBest,\nSupport");
  await email.getByTestId("send-edited").click();

  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  await expect(page.getByTestId("email-outcome")).toContainText("Your store credit for ORD-1004");
  await expect(page.getByTestId("ledger-entry")).toHaveCount(5);
  await expect(page.getByTestId("ledger")).toContainText("Answered “ord-1004”"); // the ledger keeps the answer as given
  await expect(page.getByTestId("ledger")).toContainText("Chose Store credit");

  const state = await threadState(page, threadId);
  expect(state.values.refundMethod).toBe("store_credit");
  // The sent revision carries the decision that approved it (its email's key derives from it).
  expect(state.values.reply).toEqual({
    subject: "Your store credit for ORD-1004",
    body: "Hello Tom,\n\nYour store credit is on your account.\n\nBest,\nSupport",
    approvedBy: expect.stringContaining("/confirm_email:"),
  });
  expect(state.values.email).toMatchObject({ status: "queued" });
  expect(state.decisions.map((d: { action: string }) => d.action)).toEqual([
    "input_text",
    "select_option",
    "refund_approval",
    "select_option",
    "confirm_email",
  ]);
});

test("by keyboard: a and Enter approve, a and Enter send the reply; j/k move between cards", async ({
  page,
}) => {
  // An order of its own (late: a person decides), so nothing else refunds it meanwhile.
  const [order] = await lateOrders(7700, 1, 3900);
  const threadId = await pausedThread(page, `Refund ${order} please, it came apart.`, { orderRef: order });
  await openReady(page, `/threads/${threadId}`, "thread-page");
  const approval = page.getByTestId("decision-refund_approval");
  await expect(approval).toBeVisible();
  // Two keys: the first focuses the answer that acts (nothing is answered by one stray key), Enter gives it.
  await page.keyboard.press("a");
  await expect(approval.getByTestId("approve")).toBeFocused();
  await page.keyboard.press("Enter");
  const email = page.getByTestId("decision-confirm_email");
  await expect(email).toBeVisible({ timeout: 20_000 });
  await page.keyboard.press("j");
  await expect(email.locator("[data-decision-heading]")).toBeFocused();
  await page.keyboard.press("r");
  await expect(email.getByTestId("dont-send")).toBeFocused();
  await page.keyboard.press("a");
  await expect(email.getByTestId("send-as-is")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  const decisions = (await threadState(page, threadId)).decisions.map(
    (d: { action: string; answer: unknown }) => [d.action, d.answer],
  );
  expect(decisions).toEqual([
    ["refund_approval", { decision: "approve" }],
    ["confirm_email", { choice: "send" }],
  ]);
});

test("from the inbox in four keys (j, Enter, a, Enter) the oldest refund is approved; c claims, n / p walk the queue, ? lists every key, none fires in a text field", async ({
  page,
}) => {
  // Orders of their own, at an amount no other test uses, so the inbox filtered to it lists only these.
  const [first, second, third] = await lateOrders(7710, 3, 3910);
  const oldest = await pausedThread(page, `Refund ${first} please, the seam split.`, { orderRef: first });
  const middle = await pausedThread(page, `Refund ${second} please, the zip broke.`, { orderRef: second });
  const newest = await pausedThread(page, `Refund ${third} please, it never fit.`, { orderRef: third });
  const view = "minAmount=3910&maxAmount=3910";
  await openLiveInbox(page, `${view}&limit=50`);
  await expect(page.getByTestId("inbox").locator("[data-interrupt-id]")).toHaveCount(3);

  // Four keys: the oldest row, open it, the answer that acts, give it.
  await page.keyboard.press("j");
  await page.keyboard.press("Enter");
  // The thread opens in the inbox's view: its filters ride along (not its page size).
  await expect(page).toHaveURL(new RegExp(`/threads/${oldest}\\?${view}$`));
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await page.keyboard.press("a");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 20_000 });
  expect(
    (await threadState(page, oldest)).decisions
      .filter((d: { answer: unknown }) => d.answer !== null)
      .map((d: { action: string; answer: unknown }) => [d.action, d.answer]),
  ).toEqual([["refund_approval", { decision: "approve" }]]);

  // n / p: the view's next and previous threads (soonest due first, as the inbox lists them), staying in the view.
  await openReady(page, `/threads/${middle}?${view}`, "thread-page");
  await page.keyboard.press("n");
  await expect(page).toHaveURL(new RegExp(`/threads/${newest}\\?${view}$`));
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  // Every key is a visible control too, and says it walks a view, not the whole queue.
  await expect(page.getByTestId("queue-previous")).toBeVisible();
  await expect(page.getByTestId("queue-previous")).toHaveAttribute("data-queue-view", "filtered");
  await expect(page.getByTestId("queue-previous")).toContainText("Previous in view");
  await page.keyboard.press("p");
  await expect(page).toHaveURL(new RegExp(`/threads/${middle}\\?${view}$`));
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  // The head of the view (the oldest's approval is taken): nothing before it, whatever else waits in the queue.
  await expect(page.getByTestId("queue-next")).toBeVisible();
  await expect(page.getByTestId("queue-previous")).toHaveCount(0);
  // And the way back is to that view.
  await expect(page.getByTestId("back-to-inbox")).toHaveAttribute("href", `/?${view}`);
  // Filters that do not parse are no view: the whole queue, and no link carries them.
  await openReady(page, `/threads/${middle}?minAmount=lots&limit=9`, "thread-page");
  await expect(page.getByTestId("queue-next")).toHaveAttribute("data-queue-view", "all");
  await expect(page.getByTestId("back-to-inbox")).toHaveAttribute("href", "/");
  await openReady(page, `/threads/${middle}?${view}`, "thread-page");
  // In the view, the oldest refund (its approval taken) is before nothing: only this view's decisions count.
  await openReady(page, `/threads/${oldest}?action=refund_approval&${view}`, "thread-page");
  await expect(page.getByTestId("queue-previous")).toHaveCount(0);
  await expect(page.getByTestId("queue-next")).toHaveAttribute(
    "href",
    `/threads/${middle}?action=refund_approval&${view}`,
  );
  await openReady(page, `/threads/${middle}?${view}`, "thread-page");

  // c claims the open decision (its Claim button): the page says who handles it.
  const approval = page.getByTestId("decision-refund_approval");
  await expect(approval.getByTestId("thread-claim-button")).toBeVisible();
  await page.keyboard.press("c");
  await expect(approval.getByTestId("thread-claim")).toHaveAttribute("data-claimed-by", me);
  await expect(approval.getByTestId("thread-claim")).toContainText("You are handling this");

  // No key fires while typing: n typed into the reject reason stays text, the page stays.
  const note = approval.getByTestId("decision-note");
  await note.click();
  await page.keyboard.type("n?ap");
  await expect(note).toHaveValue("n?ap");
  await expect(page).toHaveURL(new RegExp(`/threads/${middle}\\?${view}$`));
  await expect(page.getByTestId("keys-dialog")).toBeHidden();

  // ? lists every key of every page; Escape closes it.
  await page.getByTestId("thread-title").click();
  await page.keyboard.press("?");
  const keys = page.getByTestId("keys-dialog");
  await expect(keys).toBeVisible();
  for (const group of ["Every page", "Inbox", "Thread page"])
    await expect(keys.getByRole("region", { name: group })).toBeVisible();
  await expect(keys.getByTestId("keys-row")).toHaveCount(12);
  await page.keyboard.press("Escape");
  await expect(keys).toBeHidden();
  await page.getByTestId("keys-button").click();
  await expect(keys).toBeVisible();
  await keys.getByTestId("keys-close").click();
  await expect(keys).toBeHidden();
});
