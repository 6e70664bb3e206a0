import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { answerOverApi, createTicket, expect, runOverApi, test, threadState } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 1: after a fork, the outcome comes from the effect ledger of the whole thread. A refund approved,
 * paid and emailed on the first line, then forked at the approval and rejected (with its own reply): the thread page
 * and the history say plainly that €59.00 was already paid from another branch, with the follow-up — and the
 * branch's reply is an email of its own, not the first email again.
 */

async function effectsOf(page: Page, threadId: string) {
  const res = await page.request.get(`/api/threads/${threadId}/effects`);
  expect(res.status()).toBe(200);
  return (await res.json()).effects as { id: string; kind: string; summary: string; status: string }[];
}

async function pendingActions(page: Page, threadId: string) {
  return (await threadState(page, threadId)).pendingInterrupts.map((p: { action: string }) => p.action);
}

test("a branch that rejects after the first line paid says so, on the thread page and in the history", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const message = "The running shoes from ORD-1010 fell apart. Please refund me.";
  const threadId = await createTicket(page, message, "ORD-1010");
  await runOverApi(
    page,
    threadId,
    { messages: [{ id: randomUUID(), role: "user", content: message }] },
    { intake: true },
  );
  await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  await answerOverApi(page, threadId, "confirm_email", { choice: "send" });
  const finished = await threadState(page, threadId);
  const firstEmail = (finished.values.email as { effectId: string }).effectId;
  const approval = finished.decisions.find((d: { action: string }) => d.action === "refund_approval")
    .checkpointId as string;

  const fork = await page.request.post(`/api/threads/${threadId}/fork`, { data: { checkpointId: approval } });
  expect(fork.status()).toBe(202);
  await expect.poll(() => pendingActions(page, threadId), { timeout: 20_000 }).toEqual(["refund_approval"]);
  await answerOverApi(page, threadId, "refund_approval", { decision: "reject", note: "Worn for a year" });
  await answerOverApi(page, threadId, "confirm_email", { choice: "send" });

  // The branch's reply is its own email (keyed by its own decision), not the first line's again.
  const branch = await threadState(page, threadId);
  const branchEmail = (branch.values.email as { effectId: string }).effectId;
  expect(branchEmail).not.toBe(firstEmail);
  const effects = await effectsOf(page, threadId);
  expect(
    effects
      .filter((e) => e.kind === "email")
      .map((e) => e.id)
      .sort(),
  ).toEqual([firstEmail, branchEmail].sort());
  expect(effects.filter((e) => e.kind === "payment")).toHaveLength(1);

  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  const outcome = page.getByTestId("outcome");
  await expect(page.getByTestId("refund-outcome")).toContainText("None on this branch");
  await expect(page.getByTestId("refund-outcome")).not.toContainText("No refund was made");
  const contradictions = page.getByTestId("ledger-contradiction");
  await expect(contradictions.first()).toContainText("A refund of €59.00");
  await expect(contradictions.first()).toContainText("another branch");
  await expect(contradictions.first()).toContainText("reverse it by hand");
  await expect(outcome.getByTestId("ledger-line")).toHaveCount(2); // the payment and the approval email
  await checkScreens(page, testInfo, "thread");

  await page.goto(`/threads/${threadId}/history`);
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("checkpoint-contradictions")).toContainText("A refund of €59.00");
  await checkScreens(page, testInfo, "history");
});
