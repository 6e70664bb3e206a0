import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { test as base, expect, type Page, request } from "@playwright/test";
import pg from "pg";
import {
  authDir,
  type E2eRole,
  emailOf,
  passwordOf,
  readIntakeKey,
  signInOver,
  storageStatePath,
} from "./auth/users";
import { developerWords } from "./support/words";

/**
 * The demo shop's orders are shared by every spec's threads, and refunds add up to at most an order's total: a spec
 * that approves ORD-1002 in full would find nothing left to refund after an earlier spec did. Before each test on the
 * suite's server, the demo orders' refunds are cleared (the server writes where its database is).
 */
async function freshDemoShop(): Promise<void> {
  const file = join(authDir(), "database-url.txt");
  if (!existsSync(file)) return;
  const client = new pg.Client({ connectionString: readFileSync(file, "utf8").trim() });
  await client.connect();
  try {
    await client.query("DELETE FROM refunds WHERE order_id LIKE 'ORD-10%'");
  } finally {
    await client.end();
  }
}

/** Every test saves a screenshot of its final page as an artifact (attached to the report, kept in test-results). */
export const test = base.extend<{
  finalScreenshot: undefined;
  freshShop: undefined;
  operatorWords: undefined;
}>({
  /*
   * Issue 12: no page an e2e run visits shows an operator a developer's words (an error code, zod's "expected",
   * the API's "resume"). Read from the DOM of every page of the test's browser context on each load and once more
   * at the end (what the test left on screen); a hit fails the test, naming the page and the strings. What a
   * customer wrote is shown as written, so the specs' own ticket texts keep clear of those words; a thread's state
   * and raw payloads are data (`data-raw`) and are not read.
   */
  operatorWords: [
    async ({ context, page }, use) => {
      const found: string[] = [];
      const reads: Promise<void>[] = [];
      const read = (p: Page) =>
        developerWords(p).then(
          (words) => {
            if (words.length) found.push(`${new URL(p.url()).pathname}: ${words.join(" | ")}`);
          },
          () => {}, // navigated away or closed meanwhile: the next load reads it
        );
      const watch = (p: Page) => p.on("load", () => reads.push(read(p)));
      watch(page);
      context.on("page", watch);
      await use(undefined);
      await Promise.all(reads);
      for (const p of context.pages()) if (!p.isClosed() && p.url().startsWith("http")) await read(p);
      expect.soft([...new Set(found)], "developer words shown to an operator").toEqual([]);
    },
    { auto: true },
  ],
  freshShop: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern.
    async ({}, use) => {
      await freshDemoShop();
      await use(undefined);
    },
    { auto: true },
  ],
  finalScreenshot: [
    async ({ page }, use, testInfo) => {
      await use(undefined);
      const path = testInfo.outputPath("final.png");
      await page.screenshot({ path, fullPage: true }).catch(() => {});
      await testInfo.attach("final page", { path, contentType: "image/png" }).catch(() => {});
    },
    { auto: true },
  ],
});

export { type E2eRole, emailOf, expect, passwordOf, signInOver, storageStatePath };

/*
 * Who acts. Tickets are filed and started with the intake API key (as a help desk would), so the signed-in user
 * (the supervisor by default) never counts as the thread's creator and may approve its refunds (four-eyes).
 */

/** Intake keys of servers other than the suite's own (tests that start one register its key). */
const otherKeys = new Map<string, string>();

/** Use `key` as the intake key for requests to the server at `base`. */
export function registerIntakeKey(base: string, key: string): void {
  otherKeys.set(new URL(base).origin, key);
}

/** The intake key for the server at `base` ("" is the suite's own server, whose key the setup project issued). */
export function intakeKey(base = ""): string {
  if (base) {
    const key = otherKeys.get(new URL(base).origin);
    if (key) return key;
  }
  return readIntakeKey();
}

/** Headers that make a request come from the intake key instead of the signed-in user. */
export function intakeHeaders(base = ""): Record<string, string> {
  return { authorization: `Bearer ${intakeKey(base)}` };
}

/** An API client signed in as `role` on the suite's server (dispose it when done). */
export async function apiAs(role: E2eRole) {
  return request.newContext({
    baseURL: test.info().project.use.baseURL,
    storageState: storageStatePath(role),
  });
}

/** Create a ticket through the API with the intake key; returns its thread id. */
export async function createTicket(
  page: Page,
  message: string,
  orderRef?: string,
  baseUrl = "",
  agent?: string,
): Promise<string> {
  const res = await page.request.post(`${baseUrl}/api/threads`, {
    headers: intakeHeaders(baseUrl),
    data: { message, ...(orderRef ? { orderRef } : {}), ...(agent ? { agent } : {}) },
  });
  expect(res.status()).toBe(201);
  return (await res.json()).threadId as string;
}

/** The thread's state as the API reports it. */
export async function threadState(page: Page, threadId: string) {
  const res = await page.request.get(`/api/threads/${threadId}`);
  expect(res.status()).toBe(200);
  return res.json();
}

/** Serious and critical accessibility violations on the current page (axe-core). */
export async function seriousViolations(page: Page) {
  return (await axeViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Every accessibility violation axe-core finds on the current page, whatever its impact. */
export async function axeViolations(page: Page) {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5),
  }));
}

/**
 * One run over the API (new input when `body` has messages, a resume when it has `resume`); resolves with the SSE
 * text once the run paused or finished. `base` targets another server (tests that run their own); `intake` sends
 * it with the intake key (a ticket's first run) instead of as the signed-in user.
 */
export async function runOverApi(
  page: Page,
  threadId: string,
  body: Record<string, unknown> = {},
  options: { base?: string; intake?: boolean } = {},
) {
  const base = options.base ?? "";
  const res = await page.request.post(`${base}/api/threads/${threadId}/runs`, {
    headers: { accept: "text/event-stream", ...(options.intake ? intakeHeaders(base) : {}) },
    data: { threadId, runId: crypto.randomUUID(), messages: [], tools: [], context: [], ...body },
  });
  expect(res.status()).toBe(200);
  const text = await res.text();
  expect(text).toContain("RUN_FINISHED");
  return text;
}

/** A new ticket, filed and started with the intake key, whose first run has ended (paused at its first decision). */
export async function pausedThread(
  page: Page,
  message: string,
  options: { orderRef?: string; base?: string } = {},
) {
  const base = options.base ?? "";
  const threadId = await createTicket(page, message, options.orderRef, base);
  await runOverApi(
    page,
    threadId,
    { messages: [{ id: crypto.randomUUID(), role: "user", content: message }] },
    { base, intake: true },
  );
  return threadId;
}

/** The account change the specs file: a new payout account for the customer of ORD-1003. */
export const ACCOUNT_CHANGE_MESSAGE = "Please change my payout account to DE89 3704 0044 0532 0130 00.";

/**
 * An account change filed with the intake key and run to its two parallel reviews (on `base`, a server of the spec's
 * own; default the suite's); returns its thread id.
 */
export async function pausedAccountChange(
  page: Page,
  message = ACCOUNT_CHANGE_MESSAGE,
  orderRef = "ORD-1003",
  base = "",
) {
  return pausedTicketOf(page, "account_change", message, orderRef, base);
}

/** A ticket of another agent than the refund one, filed with the intake key and run to its first pause. */
export async function pausedTicketOf(
  page: Page,
  agent: string,
  message: string,
  orderRef?: string,
  base = "",
) {
  const threadId = await createTicket(page, message, orderRef, base, agent);
  await runOverApi(
    page,
    threadId,
    { messages: [{ id: crypto.randomUUID(), role: "user", content: message }] },
    { base, intake: true },
  );
  return threadId;
}

/** A refund of `orderRef` approved and its reply sent over the API: the thread completed, the refund recorded. */
export async function refundedThread(page: Page, message: string, orderRef: string) {
  const threadId = await pausedThread(page, message, { orderRef });
  await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  await answerOverApi(page, threadId, "confirm_email", { choice: "send" });
  await expect
    .poll(async () => (await threadState(page, threadId)).status, { timeout: 20_000 })
    .toBe("completed");
  return threadId;
}

/** Answer the one pending interrupt over the API; it must be `action`. */
export async function answerOverApi(page: Page, threadId: string, action: string, payload: unknown) {
  const pending = (await threadState(page, threadId)).pendingInterrupts;
  expect(pending.map((p: { action: string }) => p.action)).toEqual([action]);
  await runOverApi(page, threadId, {
    resume: [{ interruptId: pending[0].interruptId, status: "resolved", payload }],
  });
}

/** Answer one decision over the API as `role` (another person than the page's user), as a second tab or desk would. */
export async function resumeAs(role: E2eRole, threadId: string, interruptId: string, payload: unknown) {
  const other = await apiAs(role);
  try {
    const res = await other.post(`/api/threads/${threadId}/runs`, {
      headers: { accept: "text/event-stream" },
      data: {
        threadId,
        runId: crypto.randomUUID(),
        messages: [],
        tools: [],
        context: [],
        resume: [{ interruptId, status: "resolved", payload }],
      },
    });
    expect(res.status()).toBe(200);
    await res.text();
  } finally {
    await other.dispose();
  }
}

/** Open a page and wait until its root says it is hydrated (clicks before hydration are lost). */
export async function openReady(page: Page, path: string, testId: string) {
  await page.goto(path);
  await expect(page.getByTestId(testId)).toHaveAttribute("data-ready", "true");
}
