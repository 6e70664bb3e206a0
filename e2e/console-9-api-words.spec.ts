import { expect, pausedThread, test } from "./fixtures";
import { DEVELOPER_WORDS } from "./support/console";

/*
 * Issue 12: messages from the API can reach an operator's screen (a refusal is shown with its message), so they are
 * written for operators too: new input sent to a thread that waits for a decision is refused in plain words, without
 * the API's `resume`.
 */

test("new input to a thread waiting for a decision is refused in an operator's words", async ({ page }) => {
  const threadId = await pausedThread(page, "Refund ORD-1005 please, the kettle leaks.", {
    orderRef: "ORD-1005",
  });
  const res = await page.request.post(`/api/threads/${threadId}/runs`, {
    headers: { accept: "text/event-stream" },
    data: {
      threadId,
      runId: crypto.randomUUID(),
      messages: [{ id: crypto.randomUUID(), role: "user", content: "Any news?" }],
      tools: [],
      context: [],
    },
  });
  expect(res.status()).toBe(409);
  const body = await res.json();
  expect(body.code).toBe("conflict:interrupt_pending");
  expect(body.message).toContain("waiting for a decision");
  expect(body.message).not.toMatch(DEVELOPER_WORDS);
  expect(body.message).not.toContain("`");
});
