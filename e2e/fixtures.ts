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
