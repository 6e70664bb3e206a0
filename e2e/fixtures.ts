import AxeBuilder from "@axe-core/playwright";
import { test as base, expect, type Page } from "@playwright/test";

/** Every test saves a screenshot of its final page as an artifact (attached to the report, kept in test-results). */
export const test = base.extend<{ finalScreenshot: undefined }>({
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

export { expect };

/** Create a ticket through the API; returns its thread id. */
export async function createTicket(page: Page, message: string, orderRef?: string): Promise<string> {
  const res = await page.request.post("/api/threads", {
    data: { message, ...(orderRef ? { orderRef } : {}) },
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
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
}

/**
 * One run over the API (new input when `body` has messages, a resume when it has `resume`); resolves with the SSE
 * text once the run paused or finished. `base` targets another server (tests that run their own).
 */
export async function runOverApi(
  page: Page,
  threadId: string,
  body: Record<string, unknown> = {},
  base = "",
) {
  const res = await page.request.post(`${base}/api/threads/${threadId}/runs`, {
    headers: { accept: "text/event-stream" },
    data: { threadId, runId: crypto.randomUUID(), messages: [], tools: [], context: [], ...body },
  });
  expect(res.status()).toBe(200);
  const text = await res.text();
  expect(text).toContain("RUN_FINISHED");
  return text;
}

/** A new ticket whose first run has ended (paused at its first decision). */
export async function pausedThread(
  page: Page,
  message: string,
  options: { orderRef?: string; base?: string } = {},
) {
  const base = options.base ?? "";
  const created = await page.request.post(`${base}/api/threads`, {
    data: { message, ...(options.orderRef ? { orderRef: options.orderRef } : {}) },
  });
  expect(created.status()).toBe(201);
  const { threadId } = (await created.json()) as { threadId: string };
  await runOverApi(
    page,
    threadId,
    { messages: [{ id: crypto.randomUUID(), role: "user", content: message }] },
    base,
  );
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

/** Open a page and wait until its root says it is hydrated (clicks before hydration are lost). */
export async function openReady(page: Page, path: string, testId: string) {
  await page.goto(path);
  await expect(page.getByTestId(testId)).toHaveAttribute("data-ready", "true");
}
