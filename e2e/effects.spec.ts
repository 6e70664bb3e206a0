import type { Page } from "@playwright/test";
import pg from "pg";
import { createUsersAndKey } from "./auth/users";
import { expect, pausedThread, registerIntakeKey, signInOver, test } from "./fixtures";
import { type FakePaymentProvider, startFakePaymentProvider } from "./support/fake-payment";
import { createTestDatabase } from "./support/pg";
import { startTestServer, type TestServer } from "./support/server";

/*
 * A refund's payment as the operator sees it on the thread page, with a fake payment provider over HTTP that the test
 * takes down and brings back: the delivery's status, attempts and last error, its retries, and — out of attempts —
 * the operator task; and an email nobody can confirm (a server stopped while handing it over), which the operator closes
 * as arrived. A server of its own (its provider, an 8 s back-off, three attempts).
 */
test.describe.configure({ timeout: 120_000 });

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let server: TestServer;
let provider: FakePaymentProvider;

test.beforeAll(async () => {
  provider = await startFakePaymentProvider();
  database = await createTestDatabase("e2e_effects");
  server = await startTestServer({
    databaseUrl: database.url,
    signIn: false,
    env: {
      // The suite's secret and first admin (playwright.config.ts), as the other own-server specs do.
      BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? "",
      ADMIN_EMAIL: process.env.ADMIN_EMAIL ?? "",
      ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? "",
      SIGN_IN_RATE_LIMIT: "10000",
      PAYMENT_URL: provider.url,
      PAYMENT_TIMEOUT_MS: "1000",
      EFFECT_POLL_MS: "200",
      // Each wait between attempts outlasts the idle thread page's 5 s refresh, so the page sees every "queued"
      // (with 2 s, a loaded machine could go from attempt 1 to "failed" between two refreshes).
      EFFECT_RETRY_BASE_MS: "8000",
      EFFECT_RETRY_MAX_MS: "8000",
      EFFECT_MAX_ATTEMPTS: "3",
    },
  });
  registerIntakeKey(server.url, await createUsersAndKey(server.url));
});

test.beforeEach(async ({ page }) => {
  await signInOver(page.request, server.url, "supervisor");
});

test.afterAll(async () => {
  await server?.stop();
  await database?.drop();
  await provider?.close();
});

/** Open a paused refund thread and approve it on the page; returns the payment effect's row on the page. */
async function approveOnPage(page: Page, message: string) {
  const threadId = await pausedThread(page, message, { base: server.url });
  await page.goto(`${server.url}/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await page.getByTestId("decision-refund_approval").getByTestId("approve").click();
  await expect(page.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 20_000 });
  return { threadId, payment: page.locator('[data-testid="effect"][data-kind="payment"]') };
}

test("a failing payment shows its attempts and last error, retries, and is delivered once the provider is back", async ({
  page,
}) => {
  provider.setFaults({ down: true });
  const { threadId, payment } = await approveOnPage(
    page,
    "My headphones from ORD-1002 are broken, please refund them.",
  );

  // Failing: queued again after a failed attempt, with the provider's error; the state says only "queued".
  await expect(payment).toHaveAttribute("data-status", "queued", { timeout: 20_000 });
  await expect(payment.getByTestId("effect-status")).toContainText("retrying after");
  await expect(payment.getByTestId("effect-error")).toContainText("HTTP 500: injected failure");
  await expect(payment.getByTestId("effect-task")).toHaveCount(0);

  // Recovering: the next retry goes through, with no operator involved.
  provider.setFaults({});
  await expect(payment).toHaveAttribute("data-status", "delivered", { timeout: 20_000 });
  await expect(payment.getByTestId("effect-status")).toHaveText("Delivered");
  await expect(payment.getByTestId("effect-error")).toHaveCount(0);
  await expect(page.getByTestId("refund-outcome")).toHaveAttribute("data-payment-status", "delivered");
  await expect(page.getByTestId("refund-outcome")).toContainText("payment: delivered");

  const state = await (await page.request.get(`${server.url}/api/threads/${threadId}`)).json();
  expect(state.values.refund).toMatchObject({ orderId: "ORD-1002", status: "queued" });
  const effect = state.effects.find((e: { kind: string }) => e.kind === "payment");
  // Delivered on a later attempt: the attempts say it took retries; the error is cleared with the delivery.
  expect(effect).toMatchObject({ status: "delivered", lastError: null });
  expect(effect.attempts).toBeGreaterThan(1);
  expect(provider.created.filter((c) => c.orderId === "ORD-1002")).toHaveLength(1);
});

test("out of attempts, the payment raises an operator task on the thread; Retry delivers it", async ({
  page,
}) => {
  provider.setFaults({ down: true });
  const { threadId, payment } = await approveOnPage(
    page,
    "The laptop in ORD-1008 is broken, please refund it.",
  );

  // Three attempts 8 s apart, and the page's next refresh.
  await expect(payment).toHaveAttribute("data-status", "failed", { timeout: 45_000 });
  await expect(payment.getByTestId("effect-attempts")).toHaveText("3");
  await expect(payment.getByTestId("effect-error")).toContainText("HTTP 500");
  const task = payment.getByTestId("effect-task");
  await expect(task).toHaveAttribute("data-open", "true");
  await expect(task.getByTestId("effect-refunded_manually")).toBeVisible();
  await expect(task.getByTestId("effect-mark_handled")).toBeVisible();
  await expect(page.getByTestId("refund-outcome")).toContainText("payment: failed after 3 attempt(s)");

  provider.setFaults({});
  await task.getByTestId("effect-retry").click();
  await expect(payment).toHaveAttribute("data-status", "delivered", { timeout: 20_000 });
  await expect(task).toHaveAttribute("data-open", "false");
  await expect(task).toContainText("Retry by supervisor@");

  const audit = await (await page.request.get(`${server.url}/api/audit?threadId=${threadId}`)).json();
  const actions = audit.items.map((e: { action: string }) => e.action);
  expect(actions).toEqual(expect.arrayContaining(["effect_failed", "effect_task"]));
  expect(provider.created.filter((c) => c.orderId === "ORD-1008")).toHaveLength(1);
});

test("an email nobody can confirm offers 'It arrived'; confirming it closes the task and the page counts it as sent", async ({
  page,
}) => {
  provider.setFaults({});
  const { threadId } = await approveOnPage(
    page,
    "The running shoes from ORD-1010 fell apart. Please refund me.",
  );
  await page.getByTestId("decision-confirm_email").getByTestId("send-as-is").click();
  const email = page.locator('[data-testid="effect"][data-kind="email"]');
  await expect(email).toHaveAttribute("data-status", "delivered", { timeout: 20_000 });

  // What a server killed while handing the email to the mail server leaves: nobody knows whether it arrived.
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      "UPDATE effects SET status = 'unconfirmed', last_error = 'Handed to the mail server as this server stopped' WHERE thread_id = $1 AND kind = 'email'",
      [threadId],
    );
    expect(rowCount).toBe(1);
  } finally {
    await client.end();
  }
  await page.reload();
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const task = email.getByTestId("effect-task");
  await expect(task).toHaveAttribute("data-open", "true");
  await expect(task.getByTestId("effect-mark_handled")).toBeVisible();
  await expect(task.getByTestId("effect-refunded_manually")).toHaveCount(0);

  // The operator checked the mail log: it did arrive.
  await task.getByTestId("effect-confirmed_delivered").click();
  await expect(email).toHaveAttribute("data-status", "handled");
  await expect(email.getByTestId("effect-status")).toHaveText("Closed: confirmed delivered");
  await expect(task).toHaveAttribute("data-open", "false");
  const effects = (await (await page.request.get(`${server.url}/api/threads/${threadId}/effects`)).json())
    .effects as { kind: string; status: string; task: { resolution: string } | null }[];
  expect(effects.find((e) => e.kind === "email")).toMatchObject({
    status: "handled",
    task: { resolution: "confirmed_delivered" },
  });
});
