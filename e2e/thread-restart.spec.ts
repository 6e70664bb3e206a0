import type { Page } from "@playwright/test";
import { createUsersAndKey } from "./auth/users";
import { expect, pausedThread, registerIntakeKey, signInOver, test } from "./fixtures";
import { createTestDatabase } from "./support/pg";
import { startTestServer, type TestServer } from "./support/server";

/*
 * Tests that need a slow run, or kill their server: a server of their own on a fresh database, with a token delay
 * long enough to act mid-stream and short leases so a restarted server picks the run up at once.
 */
const RUN_ENV = {
  RUN_LEASE_MS: "1000",
  RUN_SWEEP_INTERVAL_MS: "200",
  OFFLINE_TOKEN_DELAY_MS: "150",
  // The suite's secret and first admin (playwright.config.ts): a restarted server keeps accepting the sessions.
  BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? "",
  ADMIN_EMAIL: process.env.ADMIN_EMAIL ?? "",
  ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? "",
  SIGN_IN_RATE_LIMIT: "10000",
};

test.describe.configure({ timeout: 120_000 });

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let server: TestServer;

test.beforeAll(async () => {
  database = await createTestDatabase("e2e_thread");
  server = await startTestServer({ databaseUrl: database.url, env: RUN_ENV, signIn: false });
  // A fresh database: the suite's users and an intake key are made again on it.
  registerIntakeKey(server.url, await createUsersAndKey(server.url));
});

// The page's storage state belongs to the suite's server; sign the supervisor in on this one (cookies are per
// host, not per port, so this session replaces it for the test).
test.beforeEach(async ({ page }) => {
  await signInOver(page.request, server.url, "supervisor");
});

test.afterAll(async () => {
  await server?.stop();
  await database?.drop();
});

async function apiThread(page: Page, threadId: string) {
  return (await page.request.get(`${server.url}/api/threads/${threadId}`)).json();
}

/** The conversation's text messages as shown: [id, text]. */
function shownMessages(page: Page) {
  return page
    .getByTestId("message")
    .evaluateAll((els) =>
      els.map((e) => [
        e.getAttribute("data-message-id"),
        e.querySelector('[data-testid="message-text"]')?.textContent,
      ]),
    );
}

/** The API's text messages: [id, text]. */
function textMessages(state: { messages: { id: string; role: string; content?: unknown }[] }) {
  return state.messages
    .filter(
      (m) => (m.role === "user" || m.role === "assistant") && typeof m.content === "string" && m.content,
    )
    .map((m) => [m.id, m.content]);
}

async function appliedSeqs(page: Page): Promise<number[]> {
  const raw = (await page.getByTestId("thread-page").getAttribute("data-applied-seqs")) ?? "";
  return raw ? raw.split(",").map(Number) : [];
}

test("Stop on a reply being written: the run stops at once, the page says who stopped it (a stop, not a failure), Continue carries on", async ({
  page,
}) => {
  const threadId = await pausedThread(page, "The running shoes from ORD-1010 fell apart, refund please.", {
    base: server.url,
  });
  const operations = async () => {
    await page.goto(`${server.url}/operations`);
    await expect(page.getByTestId("operations-ready")).toBeVisible();
    return page.getByTestId("ops-failed-threads").textContent();
  };
  const failedBefore = await operations();
  await page.goto(`${server.url}/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await page.getByTestId("approve").click();

  // The Stop button is there while the agent works; one click stops it, and the page says so and by whom. Clicked
  // while the reply is being written (the case under test), not in the moment before it starts.
  await expect(page.locator('[data-testid="message"][data-streaming="true"]')).toBeVisible({
    timeout: 20_000,
  });
  await page.getByTestId("stop-run").click({ timeout: 10_000 });
  // A stop, not a failure: neutral words, no red banner, no error code shown as one.
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-status", "stopped", { timeout: 2_000 });
  await expect(page.getByTestId("run-stopped")).toContainText("Stopped by supervisor@");
  await expect(page.getByTestId("run-stopped")).toHaveAttribute("data-code", "conflict:run_cancelled");
  await expect(page.getByTestId("run-error")).toHaveCount(0);
  await expect(page.getByTestId("status-badge").first()).toHaveText(/Stopped/);
  const stopped = await apiThread(page, threadId);
  expect(stopped.status).toBe("stopped");
  const partial = textMessages(stopped).length;
  // Operations counts it apart from failures.
  expect(await operations()).toBe(failedBefore);
  await expect(page.getByTestId("ops-failed-threads-note")).toContainText(
    "stopped on purpose (not failures)",
  );
  await page.goto(`${server.url}/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");

  // Continue carries on from the last saved step: the reply is written, the refund paid once.
  await page.getByTestId("retry-run").click();
  await expect(page.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 60_000 });
  const after = await apiThread(page, threadId);
  expect(after.status).toBe("interrupted");
  expect(textMessages(after).length).toBeGreaterThanOrEqual(partial);
  const effects = await (await page.request.get(`${server.url}/api/threads/${threadId}/effects`)).json();
  expect(effects.effects.filter((e: { kind: string }) => e.kind === "payment")).toHaveLength(1);
});

test("refresh while a run streams: the page re-attaches with nothing duplicated and nothing missing", async ({
  page,
}) => {
  const threadId = await pausedThread(page, "My headphones from ORD-1002 are broken, please refund them.", {
    base: server.url,
  });
  const url = `${server.url}/threads/${threadId}`;
  await page.goto(url);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await page.getByTestId("approve").click();
  await expect(page.locator('[data-testid="message"][data-streaming="true"]')).toBeVisible({
    timeout: 20_000,
  });

  // Reload mid-reply. The server render already holds the half-written reply (from the event log) and its seq.
  const [document] = await Promise.all([
    page.waitForResponse((r) => r.url() === url && r.request().resourceType() === "document"),
    page.reload(),
  ]);
  const html = await document.text();
  expect(html).toContain('data-status="running"');
  expect(html).toContain("Hello Lars Jensen");
  const renderedSeq = Number(/data-last-seq="(\d+)"/.exec(html)?.[1]);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");

  await expect(page.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 30_000 });
  const state = await apiThread(page, threadId);
  expect(await shownMessages(page)).toEqual(textMessages(state));

  // Seqs applied by the reloaded page: the run's logged events up to the render's seq, then the stream after it.
  const seqs = await appliedSeqs(page);
  expect(seqs.filter((s) => s <= renderedSeq).length).toBeGreaterThan(0);
  expect(seqs.filter((s) => s > renderedSeq)[0]).toBe(renderedSeq + 1);
  expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i)); // strictly one after another: no repeat, no gap
  expect(seqs.at(-1)).toBe(state.lastSeq);
  const ids = (await shownMessages(page)).map(([id]) => id);
  expect(new Set(ids).size).toBe(ids.length);
});

test("the server is killed during a run and restarted: the open page shows the run finishing", async ({
  page,
}) => {
  const threadId = await pausedThread(page, "The laptop from ORD-1008 does not start, refund please.", {
    base: server.url,
  });
  await page.goto(`${server.url}/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await page.getByTestId("approve").click();
  await expect(page.locator('[data-testid="message"][data-streaming="true"]')).toBeVisible({
    timeout: 20_000,
  });

  const port = server.port;
  await server.kill();
  await expect(page.getByTestId("reconnecting")).toBeVisible();
  server = await startTestServer({ databaseUrl: database.url, port, env: RUN_ENV, signIn: false });

  await expect(page.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId("run-notice")).toContainText("server restarted");
  await expect(page.getByTestId("reconnecting")).toBeHidden();
  await expect(page.getByTestId("status-badge")).toHaveText("Waiting for a decision");

  const state = await apiThread(page, threadId);
  expect(state.status).toBe("interrupted");
  expect(state.values.refund).toMatchObject({ orderId: "ORD-1008", amountCents: 129900, status: "queued" });
  expect(state.pendingInterrupts.map((p: { action: string }) => p.action)).toEqual(["confirm_email"]);
  expect(await shownMessages(page)).toEqual(textMessages(state));
  const seqs = await appliedSeqs(page);
  expect(new Set(seqs).size).toBe(seqs.length);
  expect(seqs.at(-1)).toBe(state.lastSeq);
});
