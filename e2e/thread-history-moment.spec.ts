import { expect, openReady, pausedThread, test } from "./fixtures";

/*
 * Issue 55: the decision history moves with the rest of the thread page. The page is sampled every 50 ms from
 * inside the browser while a refund is approved and its email sent: at every sample, the decisions the history says
 * are waiting must be the ones the page asks for (none while the agent runs or once it completed). A disagreement
 * may last one render, never more than 200 ms — it used to last 0.7–1.2 s ("Waiting for an operator" under the next
 * question, and again beside "Completed").
 */

interface Frame {
  t: number;
  status: string;
  asked: string[];
  waiting: string[];
}

declare global {
  interface Window {
    __frames?: Frame[];
  }
}

test("the decision history says what waits at the same moment as the rest of the page", async ({ page }) => {
  const threadId = await pausedThread(page, "My headphones from ORD-1002 are broken, please refund them.");
  await openReady(page, `/threads/${threadId}`, "thread-page");
  await page.evaluate(() => {
    const frames: Frame[] = [];
    window.__frames = frames;
    const ids = (selector: string) =>
      [...document.querySelectorAll(selector)].map((e) => e.getAttribute("data-interrupt-id") ?? "?").sort();
    const sample = () => {
      const status = document.querySelector('[data-testid="thread-page"]')?.getAttribute("data-status") ?? "";
      frames.push({
        t: performance.now(),
        status,
        asked: ids('[data-testid="decision-panel"] section[data-interrupt-id]'),
        waiting: ids('[data-testid="ledger-entry"][data-status="pending"]'),
      });
    };
    sample();
    setInterval(sample, 50);
  });

  const approval = page.getByTestId("decision-refund_approval");
  await approval.getByTestId("approve").click();
  const email = page.getByTestId("decision-confirm_email");
  await expect(email).toBeVisible({ timeout: 20_000 });
  await email.getByTestId("send-as-is").click();
  await expect(page.getByTestId("status-badge")).toHaveText("Completed", { timeout: 20_000 });
  await expect(page.getByTestId("ledger-entry")).toHaveCount(2);
  await page.waitForTimeout(600); // a view read that lagged would land in here

  const frames = await page.evaluate(() => window.__frames ?? []);
  // What the history should say waits, judged by the rest of the page.
  const expected = (f: Frame) => (f.status === "interrupted" ? f.asked : []);
  const agrees = (f: Frame) => JSON.stringify(f.waiting) === JSON.stringify(expected(f));
  let worst = 0;
  let since: number | null = null;
  let example: Frame | null = null;
  for (const f of frames) {
    if (agrees(f)) {
      since = null;
      continue;
    }
    since ??= f.t;
    if (f.t - since >= worst) {
      worst = f.t - since;
      example = f;
    }
  }
  expect(frames.length).toBeGreaterThan(20);
  // Both moments were seen: a question after the approval, and the end.
  expect(
    frames.some((f) => f.status === "interrupted" && f.asked.length === 1 && f.waiting.length === 1),
  ).toBe(true);
  expect(frames.at(-1)).toMatchObject({ status: "completed", asked: [], waiting: [] });
  expect(
    worst,
    `the history disagreed with the page for ${Math.round(worst)} ms: ${JSON.stringify(example)}`,
  ).toBeLessThanOrEqual(200);
});
