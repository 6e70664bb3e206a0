import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { answerOverApi, createTicket, expect, pausedThread, runOverApi, test, threadState } from "./fixtures";
import { lateOrders } from "./support/queue";

/*
 * Time travel in the browser: a finished thread (approved, refunded, emailed) is forked at its approval from the
 * history page; the branch is rejected; the tree then holds both lines, each with its own outcome.
 */

const rowButton = (page: Page, checkpointId: string) =>
  page.locator(`[data-testid="checkpoint-row"][data-checkpoint-id="${checkpointId}"] button`);

test("forks a finished thread at its approval, rejects on the branch, and shows both branches' outcomes", async ({
  page,
}) => {
  const message = "The running shoes from ORD-1010 fell apart. Please refund me.";
  const threadId = await createTicket(page, message, "ORD-1010");
  // Filed and started with the intake key; the supervisor decides.
  await runOverApi(
    page,
    threadId,
    { messages: [{ id: randomUUID(), role: "user", content: message }] },
    { intake: true },
  );
  await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  await answerOverApi(page, threadId, "confirm_email", { choice: "send" });
  const finished = await threadState(page, threadId);
  expect(finished.status).toBe("completed");
  const oldHead = finished.checkpointId as string;
  const approval = finished.decisions.find((d: { action: string }) => d.action === "refund_approval")
    .checkpointId as string;

  await page.goto(`/threads/${threadId}/history`);
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("checkpoint-detail")).toHaveAttribute("data-checkpoint-id", oldHead);

  // Select the approval checkpoint; the keyboard moves from it to its parent and back.
  await rowButton(page, approval).click();
  const detail = page.getByTestId("checkpoint-detail");
  await expect(detail).toHaveAttribute("data-checkpoint-id", approval);
  await page.keyboard.press("ArrowDown");
  await expect(detail).not.toHaveAttribute("data-checkpoint-id", approval);
  await page.keyboard.press("ArrowUp");
  await expect(detail).toHaveAttribute("data-checkpoint-id", approval);
  await expect(rowButton(page, approval)).toBeFocused();

  // Its diff against the parent: the policy check's writes, old → new.
  const diff = page.getByTestId("checkpoint-diff");
  await expect(diff.locator('[data-key="policy"]')).toContainText("over_auto_limit");
  await expect(diff.locator('[data-key="requested"]')).toContainText("null");
  await expect(diff.locator('[data-key="requested"]')).toContainText("5900");
  await expect(page.getByTestId("checkpoint-interrupts")).toContainText("Refund approval");
  await expect(page.getByTestId("checkpoint-decision")).toHaveText("none yet");

  // Before forking: what the branch would reach again, and that the ledger stops a second refund.
  const warnings = page.getByTestId("side-effect-warnings");
  await expect(warnings.locator('[data-code="side_effect:refund"]')).toContainText("€59.00");
  await expect(warnings.locator('[data-code="side_effect:email"]')).toBeVisible();
  await expect(warnings).toContainText("A branch cannot undo them");

  // State edits are checked in the browser before anything is sent.
  await page.getByLabel("Edit the state before forking").check();
  await page.getByLabel("State changes (JSON object)").fill("[1]");
  await expect(page.locator("#fork-values-help")).toContainText("must be a JSON object");
  await expect(page.getByTestId("fork-submit")).toBeDisabled();
  await page.getByLabel("State changes (JSON object)").fill('{"messages": []}');
  await expect(page.locator("#fork-values-help")).toContainText("cannot be set: messages");
  await page.getByLabel("Edit the state before forking").uncheck();

  await page.getByTestId("fork-submit").click();
  await expect(page.getByTestId("fork-result")).toContainText("New branch started from step");
  await expect(
    page.getByTestId("fork-result").getByRole("link", { name: "Open the thread" }),
  ).toHaveAttribute("href", `/threads/${threadId}`);

  // The branch runs to the approval again; the operator says no this time (over the API), and sends no email.
  await expect
    .poll(async () =>
      (await threadState(page, threadId)).pendingInterrupts.map((p: { action: string }) => p.action),
    )
    .toEqual(["refund_approval"]);
  await answerOverApi(page, threadId, "refund_approval", {
    decision: "reject",
    note: "what if we had said no",
  });
  await answerOverApi(page, threadId, "confirm_email", { choice: "dont_send" });
  const branchHead = (await threadState(page, threadId)).checkpointId as string;

  // The live tree picks the branch up: two branches, the new one is the head's line (main).
  await expect(
    page.locator(`[data-testid="checkpoint-row"][data-checkpoint-id="${branchHead}"]`),
  ).toBeVisible();
  await expect(page.locator('[data-testid="checkpoint-row"][data-branch="branch-1"]').first()).toBeVisible();
  await expect(rowButton(page, approval)).toContainText("Fork point · 2 branches");

  await page.getByTestId("branch-main").click();
  await expect(detail).toHaveAttribute("data-checkpoint-id", branchHead);
  await expect(page.getByTestId("checkpoint-decision")).toContainText("Rejected");
  await expect(page.getByTestId("checkpoint-refund")).toHaveText("none");
  await expect(page.getByTestId("checkpoint-email")).toContainText("not sent");

  await page.getByTestId("branch-branch-1").click();
  await expect(detail).toHaveAttribute("data-checkpoint-id", oldHead);
  await expect(page.getByTestId("checkpoint-decision")).toContainText("Approved");
  await expect(page.getByTestId("checkpoint-refund")).toContainText("€59.00");
  // A snapshot of its step: what the graph knew then, and the ledger's word on the email since.
  await expect(page.getByTestId("checkpoint-email")).toContainText("queued for delivery at this step");
});

test("a long history is searchable: filter by node, by source and 'asked a person'; jump to the head, a line's first step, a step number; compare two steps", async ({
  page,
}) => {
  const [order] = await lateOrders(7720, 1, 3920);
  const threadId = await pausedThread(page, `Refund ${order} please, the strap snapped.`, {
    orderRef: order,
  });
  await answerOverApi(page, threadId, "refund_approval", { decision: "approve" });
  await page.goto(`/threads/${threadId}/history`);
  await expect(page.getByTestId("history")).toHaveAttribute("data-ready", "true");
  const rows = page.getByTestId("checkpoint-row");
  const total = await rows.count();
  expect(total).toBeGreaterThan(4);
  const detail = page.getByTestId("checkpoint-detail");
  const headId = await rows.first().getAttribute("data-checkpoint-id");
  const oldest = rows.last();
  const oldestId = await oldest.getAttribute("data-checkpoint-id");
  const oldestNumber = await oldest.getAttribute("data-number");

  // "Asked a person": the step that took the approval's answer and the step waiting for the reply's.
  await page.getByTestId("timeline-asked").check();
  await expect(page.getByTestId("timeline-count")).toHaveText(`2 of ${total} steps match.`);
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toHaveAttribute("data-checkpoint-id", headId ?? "");
  await expect(rows.nth(1).getByTestId("asked-a-person")).toBeVisible();
  await page.getByTestId("timeline-clear").click();
  await expect(rows).toHaveCount(total);

  // By node: every listed step was written by it.
  const node = page.getByTestId("timeline-node");
  const firstNode = await node.locator("option").nth(1).getAttribute("value");
  await node.selectOption(firstNode ?? "");
  const byNode = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-nodes") ?? ""));
  expect(byNode.length).toBeGreaterThan(0);
  expect(byNode.length).toBeLessThan(total);
  for (const nodes of byNode) expect(nodes.split(" ")).toContain(firstNode);
  await node.selectOption("");

  // By source: the run inputs only.
  await page.getByTestId("timeline-source").selectOption("input");
  const sources = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-source")));
  expect(sources.length).toBeGreaterThan(0);
  expect(new Set(sources)).toEqual(new Set(["input"]));
  await page.getByTestId("timeline-clear").click();

  // Jumps: to a step by number, to the head, to the first step of the selected step's line.
  await page.getByTestId("jump-step").fill(oldestNumber ?? "");
  await page.getByTestId("jump-step-go").click();
  await expect(detail).toHaveAttribute("data-checkpoint-id", oldestId ?? "");
  await page.getByTestId("jump-head").click();
  await expect(detail).toHaveAttribute("data-checkpoint-id", headId ?? "");
  await page.getByTestId("jump-line-root").click();
  await expect(detail).toHaveAttribute("data-checkpoint-id", oldestId ?? "");
  await page.getByTestId("jump-step").fill("99999");
  await page.getByTestId("jump-step-go").click();
  await expect(page.getByTestId("jump-missing")).toContainText("There is no step 99999");
  await expect(detail).toHaveAttribute("data-checkpoint-id", oldestId ?? "");

  // Compare the first step with the head: where they meet, and what changes from one to the other.
  await page.getByTestId("compare-with").selectOption(headId ?? "");
  await expect(page.getByTestId("compare-ancestor")).toContainText(
    `One descends from the other: step ${oldestNumber} is the earlier`,
  );
  const compared = page.getByTestId("compare-diff");
  await expect(compared.locator('[data-key="messages"]')).toBeVisible();
  await expect(compared.locator('[data-key="policy"]')).toBeVisible();
});
