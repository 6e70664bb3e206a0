import { randomUUID } from "node:crypto";
import { answerOverApi, createTicket, expect, intakeHeaders, openReady, test, threadState } from "./fixtures";

/*
 * Issue 32, double texting on the thread page: a customer writes again while the refund agent is still working on
 * the first message. The refund agent enqueues: the page shows the second message waiting (who sent it, that it runs
 * after the current run and its decisions), and once the approval and the reply are given it runs and joins the
 * conversation — nothing refused, nothing lost.
 */
test("a message sent while the agent works waits on the page, then runs after the decisions", async ({
  page,
}) => {
  const first = "The running shoes from ORD-1010 fell apart. Please refund me.";
  const threadId = await createTicket(page, first, "ORD-1010");
  const body = (content: string) => ({
    threadId,
    runId: randomUUID(),
    messages: [{ id: randomUUID(), role: "user", content }],
    tools: [],
    context: [],
  });
  // The first run streams; the second message is sent as soon as it has started.
  const base = test.info().project.use.baseURL as string;
  const firstRun = await fetch(`${base}/api/threads/${threadId}/runs`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...intakeHeaders() },
    body: JSON.stringify(body(first)),
  });
  expect(firstRun.status).toBe(200);
  const reader = (firstRun.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  for (let seen = ""; !seen.includes("RUN_STARTED"); ) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the first run's stream ended before it started");
    seen += decoder.decode(value, { stream: true });
  }
  const again = "Also, the second pair in the box was the wrong size.";
  const queued = await page.request.post(`/api/threads/${threadId}/runs`, {
    headers: { accept: "text/event-stream" },
    data: body(again),
  });
  expect(queued.status()).toBe(202);
  expect(await queued.json()).toMatchObject({ queued: true, strategy: "enqueue", position: 1 });
  // The first run goes on to its approval.
  while (!(await reader.read()).done) {}

  await openReady(page, `/threads/${threadId}`, "thread-page");
  const waiting = page.getByTestId("queued-message");
  await expect(waiting).toHaveCount(1);
  await expect(waiting).toContainText("Waiting to run after the current run and its decisions");
  await expect(waiting).toContainText(again);

  await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  await answerOverApi(page, threadId, "confirm_email", { choice: "send" });
  // The queued message ran: it is in the conversation, and nothing waits any more.
  await expect
    .poll(async () => (await threadState(page, threadId)).queuedInputs.length, { timeout: 20_000 })
    .toBe(0);
  await page.reload();
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("queued-message")).toHaveCount(0);
  await expect(
    page.getByTestId("conversation").getByTestId("message").filter({ hasText: again }),
  ).toHaveCount(1);
});
