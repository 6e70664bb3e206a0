import type { Page } from "@playwright/test";
import { createUsersAndKey } from "./auth/users";
import {
  ACCOUNT_CHANGE_MESSAGE,
  expect,
  pausedAccountChange,
  pausedThread,
  registerIntakeKey,
  signInOver,
  test,
} from "./fixtures";
import { checkScreens } from "./support/console";
import { createTestDatabase } from "./support/pg";
import { startTestServer, type TestServer } from "./support/server";

/*
 * Run control on the thread page (issue 32): a run at its spending limit asks a person to raise it or stop, and a
 * durable timer shows what it waits for and fires by itself. A server of its own: one token per thread (every thread's
 * second model call meets the limit) and a 4 s cooling-off for payout changes.
 */
const COOL_OFF_MS = 4000;
const ENV = {
  THREAD_TOKEN_BUDGET: "1",
  RUN_TOKEN_BUDGET: "0",
  ACCOUNT_CHANGE_COOLOFF_MS: String(COOL_OFF_MS),
  DEADLINE_SWEEP_MS: "200",
  // The suite's secret and first admin (playwright.config.ts): sessions made here are accepted there too.
  BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? "",
  ADMIN_EMAIL: process.env.ADMIN_EMAIL ?? "",
  ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? "",
  SIGN_IN_RATE_LIMIT: "10000",
};

test.describe.configure({ timeout: 120_000 });

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let server: TestServer;

test.beforeAll(async () => {
  database = await createTestDatabase("e2e_limits");
  server = await startTestServer({ databaseUrl: database.url, env: ENV, signIn: false });
  registerIntakeKey(server.url, await createUsersAndKey(server.url));
});

test.beforeEach(async ({ page }) => {
  await signInOver(page.request, server.url, "supervisor");
});

test.afterAll(async () => {
  await server?.stop();
  await database?.drop();
});

async function pending(page: Page, threadId: string) {
  const view = await (await page.request.get(`${server.url}/api/threads/${threadId}`)).json();
  return view.pendingInterrupts as {
    interruptId: string;
    action: string;
    payload: Record<string, unknown>;
  }[];
}

async function decide(page: Page, threadId: string, interruptId: string, answer: unknown) {
  const res = await page.request.post(`${server.url}/api/threads/${threadId}/decisions/${interruptId}`, {
    data: { status: "resolved", answer },
  });
  expect([200, 202]).toContain(res.status());
}

test("a spending limit: the card says what was spent, refuses a limit below it, and a raise lets the run go on", async ({
  page,
}, testInfo) => {
  const threadId = await pausedThread(page, "My headphones from ORD-1002 are broken, please refund them.", {
    base: server.url,
  });
  const [approval] = await pending(page, threadId);
  expect(approval?.action).toBe("refund_approval");
  await decide(page, threadId, approval!.interruptId, { decision: "approve" });
  await expect
    .poll(async () => (await pending(page, threadId)).map((p) => p.action), { timeout: 30_000 })
    .toEqual(["run_budget"]);
  const used = (await pending(page, threadId))[0]!.payload.used as number;

  await page.goto(`${server.url}/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const card = page.getByTestId("decision-run_budget");
  await expect(card).toBeVisible();
  await expect(card.getByTestId("budget-limit")).toContainText("1 token (tokens per thread)");
  await expect(card.getByTestId("budget-used")).toContainText(`${used.toLocaleString("en")} tokens`);
  await checkScreens(page, testInfo, "thread-spending-limit");

  // A limit at or below what was spent is refused as you type; the button says what it will do.
  await card.getByTestId("budget-to").fill(String(used));
  await expect(card.getByText(/must be more than/)).toBeVisible();
  await expect(card.getByTestId("budget-raise")).toBeDisabled();
  await card.getByTestId("budget-to").fill("50000");
  await expect(card.getByTestId("budget-raise")).toHaveText("Raise to 50,000 tokens");
  await card.getByTestId("budget-raise").click();

  // The run goes on from the model call that waited: the reply is written and asks to be sent.
  await expect(page.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 30_000 });
  const audit = await (
    await page.request.get(`${server.url}/api/audit?action=decision&threadId=${threadId}`)
  ).json();
  expect(
    audit.items.find((i: { payload?: { action?: string } }) => i.payload?.action === "run_budget"),
  ).toMatchObject({ answer: { decision: "raise", to: 50_000 } });
});

test("a durable timer: the card says what the thread waits for, and the page follows it when it fires", async ({
  page,
}, testInfo) => {
  const threadId = await pausedAccountChange(page, ACCOUNT_CHANGE_MESSAGE, "ORD-1001", server.url);
  const reviews = await pending(page, threadId);
  const fraud = reviews.find((r) => r.payload.review === "fraud")!;
  const data = reviews.find((r) => r.payload.review === "data")!;
  // Two different people approve the two reviews (the page's supervisor, then an operator over the API).
  await decide(page, threadId, fraud.interruptId, { decision: "approve" });
  await signInOver(page.request, server.url, "operator");
  await decide(page, threadId, data.interruptId, { decision: "approve" });
  await signInOver(page.request, server.url, "supervisor");

  await page.goto(`${server.url}/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const card = page.getByTestId("decision-wait_timer");
  await expect(card).toBeVisible({ timeout: 20_000 });
  await expect(card.getByTestId("timer-reason")).toContainText(
    "takes effect when the cooling-off period is over",
  );
  await expect(card.getByTestId("timer-duration")).toContainText("Waits 4 s");
  await checkScreens(page, testInfo, "thread-timer");

  // Nobody answers: when the time is up the change is made, and the open page says so without a reload.
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-status", "completed", {
    timeout: 30_000,
  });
  // The ledger says who fired it, as people read it.
  await expect(page.getByTestId("ledger-by").filter({ hasText: "Timer (automatic)" })).toHaveCount(1);
  const audit = await (
    await page.request.get(`${server.url}/api/audit?action=decision&threadId=${threadId}`)
  ).json();
  expect(
    audit.items.filter((i: { payload?: { action?: string } }) => i.payload?.action === "wait_timer"),
  ).toEqual([expect.objectContaining({ actor: "system:timer", answer: { outcome: "fired" } })]);
});
