import { request } from "@playwright/test";
import { apiAs, emailOf, expect, passwordOf, pausedThread, test } from "./fixtures";

/*
 * Delegated authority before the click (issue 57): a money limit on the page's user, proposed by one admin and approved
 * by a second, is said on the approval card — the limit, the amount, who may take it instead — and the approve button
 * is disabled; rejecting stays open. The limit is taken away again (by proposal) at the end, whatever happened.
 */
test("a per-decision limit is shown on the card before the click, and approving is not offered", async ({
  page,
}) => {
  const baseURL = test.info().project.use.baseURL;
  const admin = await apiAs("admin");
  const created = await admin.post("/api/admin/users", {
    data: { email: "admin2@e2e.local", name: "Second admin", password: passwordOf("admin"), role: "admin" },
  });
  expect([201, 409]).toContain(created.status());
  const second = await request.newContext({ baseURL });
  const signedIn = await second.post("/api/auth/sign-in/email", {
    headers: { origin: new URL(baseURL!).origin },
    data: { email: "admin2@e2e.local", password: passwordOf("admin") },
  });
  expect(signedIn.ok()).toBe(true);
  const users = (await (await admin.get("/api/admin/users")).json()).items as { id: string; email: string }[];
  const me = users.find((u) => u.email === emailOf("supervisor"))!;

  /** Propose as the first admin, approve as the second: the limits after it. */
  const change = async (body: Record<string, unknown>) => {
    const proposed = await admin.post("/api/admin/authority", { data: body });
    expect(proposed.status()).toBe(202);
    const { proposal } = await proposed.json();
    const approved = await second.post(`/api/admin/proposals/${proposal.id}`, {
      data: { decision: "approve" },
    });
    expect(approved.status()).toBe(200);
    return (await approved.json()).result.limits as { id: string; subjectId: string }[];
  };

  const limits = await change({
    subjectKind: "user",
    subjectId: me.id,
    agentId: "refund",
    action: "refund_approval",
    perDecisionCents: 10_000,
  });
  const limitId = limits.find((l) => l.subjectId === me.id)!.id;
  try {
    const threadId = await pausedThread(page, "My laptop from ORD-1008 arrived broken. Full refund please.", {
      orderRef: "ORD-1008",
    });
    await page.goto(`/threads/${threadId}`);
    await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
    await expect(page.getByTestId("approve")).toBeDisabled();
    const refusal = page.getByTestId("decision-refusal");
    await expect(refusal).toContainText(
      "Your authority on refund for refund_approval is €100.00 per decision",
    );
    await expect(refusal).toContainText("Someone whose authority covers it may:");
    await expect(page.getByTestId("reject")).toBeEnabled();
  } finally {
    await change({ remove: limitId });
    await second.dispose();
    await admin.dispose();
  }
});
