import { chromium } from "@playwright/test";
import { expect } from "vitest";
import { forkFields } from "@/components/history/fork-schema";
import type { AgentDefinition } from "@/lib/runtime/agents/registry";
import { intakeJsonSchema } from "@/lib/runtime/runs/intake";
import { agentFor, createTicket, postRun, runBody, runOnce } from "../api/client";
import { authedFetch, authHeaders } from "../support/auth";
import { inboxReplyAgent } from "./agents/inbox-reply/agent";
import { nestedReviewAgent } from "./agents/nested-review/agent";

/*
 * What a team's own agent, added by the guide, must do on a real server (the upgrade suite's v2 build has them: a
 * team's agents arriving with the next deploy): its question shown in Chromium, still there after a reload, answered
 * from its card; then a fork from before the question asks it again, answered otherwise over HTTP.
 */

export const GUIDE_FLOWS: Record<
  string,
  {
    agent: AgentDefinition;
    tool: string;
    otherwise: unknown;
    approved: string;
    other: string;
    /** What the agent's question says when its ticket's own choice fields are filed with their last choice. */
    filedWith?: string;
    /** Words of the other answer that the ledger, the audit trail and the answer handed to the graph must keep. */
    kept?: string;
  }
> = {
  inbox_reply: {
    agent: inboxReplyAgent as AgentDefinition,
    filedWith: "Dear customer",
    tool: "send_reply",
    // agent-inbox's "ignore", with the reviewer's note: not a rejection the agent reads, but kept.
    otherwise: [{ type: "ignore", args: "The customer called; the parcel was found." }],
    approved: "Reviewed by a person (approved)",
    other: "Reviewed by a person (ignored)",
    kept: "The customer called; the parcel was found.",
  },
  nested_review: {
    agent: nestedReviewAgent as AgentDefinition,
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
    // Approve each call (a call that moves money opens with nothing chosen).
    const approves = card.getByTestId("tool-decision-approve");
    for (let i = 0; i < (await approves.count()); i++) await approves.nth(i).check();
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
  if (flow.kept) {
    // The other answer's words: in the ledger's answer (what the graph was resumed with) and in the audit trail.
    const other = (done.decisions as { interruptId: string; answer: unknown }[]).find(
      (d) => d.interruptId === asked.interruptId,
    );
    expect(JSON.stringify(other?.answer)).toContain(flow.kept);
    const audit = await (await authedFetch(`${base}/api/audit?threadId=${threadId}`, {}, "admin")).json();
    expect(JSON.stringify(audit)).toContain(flow.kept);
  }
}

/**
 * The agent's own ticket, on a real server: `POST /api/threads` refuses a field the agent does not have and a choice
 * outside its list, naming the field; the new-ticket page in Chromium draws every field of the agent's intake (and no
 * other agent's), and a ticket filed there reaches the thread as typed — each choice field on its last choice.
 */
export async function runGuideIntake(base: string, agentId: string): Promise<void> {
  const flow = GUIDE_FLOWS[agentId]!;
  const fields = forkFields(intakeJsonSchema(flow.agent)).filter((f) => f.name !== "message");
  const post = (body: unknown) =>
    authedFetch(`${base}/api/threads`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const message = "My parcel is late, please tell me where it is.";
  const unknown = await post({ agent: agentId, message, orderNumber: "ORD-1002" });
  expect(unknown.status).toBe(400);
  expect(JSON.stringify(await unknown.json())).toContain("orderNumber");
  for (const field of fields.filter((f) => f.kind === "choice")) {
    const wrong = await post({ agent: agentId, message, [field.name]: "not-a-choice" });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(await wrong.json())).toContain(field.name);
  }

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" });
  try {
    const context = await browser.newContext({
      baseURL: base,
      extraHTTPHeaders: await authHeaders(base, "operator"),
    });
    const page = await context.newPage();
    await page.goto("/threads/new");
    await page.locator('[data-testid="new-ticket"][data-ready="true"]').waitFor({ timeout: 20_000 });
    await page.getByTestId("ticket-agent").selectOption(agentId);
    const expected: Record<string, unknown> = { message };
    for (const field of fields) {
      const control = page.getByTestId(
        field.widget === "order" ? "ticket-order" : `ticket-field-${field.name}`,
      );
      await control.waitFor();
      const last = field.choices.at(-1);
      if (field.kind === "choice" && last) {
        await control.selectOption(last);
        expected[field.name] = last;
      } else if (field.defaultValue !== undefined) {
        expected[field.name] = field.defaultValue;
      }
    }
    await page.getByTestId("ticket-message").fill(message);
    await page.getByTestId("ticket-submit").click();
    await page.waitForURL(/\/threads\/[0-9a-f-]{36}$/, { timeout: 20_000 });
    const threadId = page.url().split("/").at(-1)!;
    const view = await until(async () => {
      const v = await (await authedFetch(`${base}/api/threads/${threadId}`)).json();
      return v.pendingInterrupts?.length ? v : null;
    });
    expect(view.agentId).toBe(agentId);
    expect(view.ticket).toEqual(expected);
    if (flow.filedWith) expect(JSON.stringify(view.pendingInterrupts)).toContain(flow.filedWith);
    // The thread page says what the ticket was filed with: each of the agent's own fields, by its title.
    for (const field of fields.filter((f) => f.widget !== "order" && expected[f.name] !== undefined)) {
      const line = page.getByTestId(`ticket-field-${field.name}`);
      await line.waitFor({ timeout: 20_000 });
      expect((await line.textContent())?.toLowerCase()).toContain(String(expected[field.name]).toLowerCase());
      if (field.title) expect(await line.textContent()).toContain(field.title);
    }
  } finally {
    await browser.close();
  }
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
