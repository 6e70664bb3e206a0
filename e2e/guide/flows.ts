import { chromium } from "@playwright/test";
import { expect } from "vitest";
import { agentFor, createTicket, postRun, runBody, runOnce } from "../api/client";
import { authedFetch, authHeaders } from "../support/auth";

/*
 * What a team's own agent, added by the guide, must do on a real server (the upgrade suite's v2 build has them: a
 * team's agents arriving with the next deploy): its question shown in Chromium, still there after a reload, answered
 * from its card; then a fork from before the question asks it again, answered otherwise over HTTP.
 */

export const GUIDE_FLOWS: Record<
  string,
  { tool: string; otherwise: unknown; approved: string; other: string }
> = {
  inbox_reply: {
    tool: "send_reply",
    otherwise: [{ type: "response", args: "Mention the tracking number." }],
    approved: "Reviewed by a person (approved)",
    other: "Reviewed by a person (answered)",
  },
  nested_review: {
    tool: "close_ticket",
    otherwise: { decisions: [{ type: "reject", message: "Still waiting for the parcel." }] },
    approved: "A person closed the ticket.",
    other: "A person kept the ticket open.",
  },
};

export async function runGuideFlow(base: string, agentId: string): Promise<void> {
  const flow = GUIDE_FLOWS[agentId]!;
  const message = "Where is my parcel? It has been two weeks.";
  const threadId = await createTicket(base, message, undefined, agentId);
  const first = await runOnce(agentFor(base, threadId), { message });
  expect(first.interrupts.map((i) => i.reason)).toEqual(["tool_review"]);
  const interruptId = first.interrupts[0]!.id;

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" });
  try {
    const context = await browser.newContext({
      baseURL: base,
      extraHTTPHeaders: await authHeaders(base, "supervisor"),
    });
    const page = await context.newPage();
    await page.goto(`/threads/${threadId}`);
    const card = page.getByTestId("decision-tool_review");
    await card.getByTestId("tool-call-card").waitFor({ timeout: 20_000 });
    expect(await card.getByTestId("tool-call-card").textContent()).toContain(flow.tool);
    // A refresh finds the same question.
    await page.reload();
    await page.locator('[data-testid="thread-page"][data-ready="true"]').waitFor({ timeout: 20_000 });
    expect(await card.getAttribute("data-interrupt-id")).toBe(interruptId);
    await card.getByTestId("submit-review").click();
    await page.getByTestId("status-badge").filter({ hasText: "Completed" }).waitFor({ timeout: 20_000 });
    await page.getByText(flow.approved).waitFor();
  } finally {
    await browser.close();
  }

  // Fork from the checkpoint that asked: the question is asked again, and answered otherwise over HTTP.
  const view = await (await authedFetch(`${base}/api/threads/${threadId}`)).json();
  const at = (view.decisions as { interruptId: string; checkpointId: string }[]).find(
    (d) => d.interruptId === interruptId,
  );
  expect(at?.checkpointId).toBeTruthy();
  const fork = await authedFetch(`${base}/api/threads/${threadId}/fork`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ checkpointId: at!.checkpointId }),
  });
  expect(fork.status).toBe(202);
  const asked = await until(async () => {
    const v = await (await authedFetch(`${base}/api/threads/${threadId}`)).json();
    return !v.activeRunId && v.pendingInterrupts.length === 1
      ? (v.pendingInterrupts[0] as { interruptId: string; action: string })
      : null;
  });
  expect(asked.action).toBe("tool_review");
  expect(asked.interruptId).not.toBe(interruptId);
  const answered = await postRun(
    base,
    threadId,
    runBody(threadId, [{ interruptId: asked.interruptId, status: "resolved", payload: flow.otherwise }]),
  );
  expect(answered.status).toBe(200);
  const done = await until(async () => {
    const v = await (await authedFetch(`${base}/api/threads/${threadId}`)).json();
    return v.status === "completed" ? v : null;
  });
  expect(JSON.stringify(done.messages)).toContain(flow.other);
  // The history shows the question where it was asked and the fork as a branch of its own.
  const history = await (await authedFetch(`${base}/api/threads/${threadId}/history`)).json();
  expect((history.branches as unknown[]).length).toBe(2);
  expect((history.checkpoints as { interruptCount: number }[]).some((c) => c.interruptCount > 0)).toBe(true);
  // Both decisions are in the ledger, each resolved once.
  expect((done.decisions as { status: string }[]).map((d) => d.status).sort()).toEqual([
    "resolved",
    "resolved",
  ]);
}

async function until<T>(probe: () => Promise<T | null>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== null) return got;
    if (Date.now() > end) throw new Error("guide: timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}
