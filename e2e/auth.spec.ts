import type { Page } from "@playwright/test";
import {
  emailOf,
  expect,
  intakeHeaders,
  passwordOf,
  pausedThread,
  resumeAs,
  seriousViolations,
  signInOver,
  storageStatePath,
  test,
  threadState,
} from "./fixtures";

/*
 * Signing in and out, what each role sees, and the audit trail. Tickets are filed and started with the intake key;
 * the people deciding are signed in.
 */

const signedOut = { cookies: [], origins: [] };

/**
 * A ticket for ORD-1002 (€249.00: over the automatic limit, within an operator's) filed and started with the intake
 * key, which needs no session; checked to wait for its approval when the page is signed in.
 */
async function pendingRefund(page: Page, check = true): Promise<string> {
  const threadId = await pausedThread(page, "Refund for ORD-1002 please, the headphones crackle.", {
    orderRef: "ORD-1002",
  });
  if (check) {
    const pending = (await threadState(page, threadId)).pendingInterrupts;
    expect(pending.map((p: { action: string }) => p.action)).toEqual(["refund_approval"]);
  }
  return threadId;
}

/** The audit trail filtered with its own form (a GET), as a person would; `action` "" is everything. */
async function filterAudit(page: Page, action: string, actor: string) {
  await page.goto("/audit");
  await expect(page.getByTestId("audit-page")).toBeVisible();
  await page.getByLabel("What").selectOption(action);
  await page.getByLabel("Who").fill(actor);
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/\/audit\?/);
  const search = new URL(page.url()).searchParams;
  expect(search.get("action") ?? "").toBe(action);
  expect(search.get("actor")).toBe(actor);
  await expect(page.getByTestId("audit-page")).toBeVisible();
}

test.describe("signed out", () => {
  test.use({ storageState: signedOut });

  test("an operator signs in with the form, approves a refund, and finds it in the audit trail", async ({
    page,
  }) => {
    const threadId = await pendingRefund(page, false); // signed out: the thread cannot be read yet
    expect((await page.request.get(`/api/threads/${threadId}`)).status()).toBe(401);

    // Nothing without a session: the inbox sends the browser to sign in, and comes back after.
    await page.goto("/");
    await expect(page).toHaveURL(/\/sign-in\?next=%2F$/);
    const form = page.getByTestId("sign-in-form");
    await expect(form).toHaveAttribute("data-ready", "true");

    // A wrong password is refused with a readable message, and the form stays usable.
    await page.getByLabel("Email").fill(emailOf("operator"));
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByTestId("sign-in-submit").click();
    await expect(page.getByTestId("sign-in-error")).toContainText("not right");
    await expect(page).toHaveURL(/\/sign-in/);

    await page.getByLabel("Password").fill(passwordOf("operator"));
    await page.getByTestId("sign-in-submit").click();
    await expect(page).toHaveURL(/\/(\?.*)?$/);
    await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
    await expect(page.getByTestId("signed-in-as")).toContainText(`${emailOf("operator")} · operator`);

    await page.goto(`/threads/${threadId}`);
    await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
    const approval = page.getByTestId("decision-refund_approval");
    await expect(approval.getByTestId("approve")).toBeEnabled();
    await expect(approval.getByTestId("requested-amount")).toHaveText("€249.00");
    await approval.getByTestId("approve").click();
    await expect(page.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 20_000 });
    await expect(page.getByTestId("ledger")).toContainText(`Approved — by ${emailOf("operator")}`);

    const decided = (await threadState(page, threadId)).decisions.find(
      (d: { action: string }) => d.action === "refund_approval",
    );
    expect(decided).toMatchObject({ status: "resolved", resolvedBy: emailOf("operator") });

    // The audit trail: the decision, by this operator, on this thread; and the sign-in before it.
    await filterAudit(page, "decision", emailOf("operator"));
    const decision = page
      .locator('[data-testid="audit-entry"][data-action="decision"]')
      .filter({ has: page.locator(`a[href="/threads/${threadId}"]`) });
    await expect(decision).toHaveCount(1);
    await expect(decision.getByTestId("audit-actor")).toContainText(emailOf("operator"));
    await expect(decision.getByTestId("audit-answer")).toContainText('"approve"');

    for (const action of await page
      .getByTestId("audit-entry")
      .evaluateAll((entries) => entries.map((e) => e.getAttribute("data-action")))) {
      expect(action).toBe("decision");
    }

    // Everything this operator did: the decision, and the sign-in before it.
    await filterAudit(page, "", emailOf("operator"));
    await expect(decision).toHaveCount(1);
    const signIn = page.locator('[data-testid="audit-entry"][data-action="sign_in"]').first();
    await expect(signIn.getByTestId("audit-actor")).toContainText(emailOf("operator"));
    const actions = await page
      .getByTestId("audit-entry")
      .evaluateAll((entries) => entries.map((e) => e.getAttribute("data-action")));
    expect(actions.indexOf("decision")).toBeLessThan(actions.indexOf("sign_in")); // newest first
    for (const actor of await page.getByTestId("audit-actor").allTextContents()) {
      expect(actor).toContain(emailOf("operator"));
    }
  });

  test("signing out ends the session: pages go to sign-in and the API answers 401", async ({ page }) => {
    // A session of its own (signing out ends it on the server; the shared storage states must keep theirs).
    const baseURL = test.info().project.use.baseURL as string;
    await signInOver(page.request, baseURL, "supervisor");
    expect((await page.request.get("/api/threads")).status()).toBe(200);

    await page.goto("/");
    await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
    await expect(page.getByTestId("signed-in-as")).toContainText(emailOf("supervisor"));
    await page.getByTestId("signed-in-as").getByTestId("sign-out").click();
    await expect(page).toHaveURL(/\/sign-in$/);
    await expect(page.getByTestId("sign-in-form")).toBeVisible();

    await page.goto("/");
    await expect(page).toHaveURL(/\/sign-in\?next=%2F$/);
    await expect(page.getByTestId("signed-in-as")).toHaveCount(0);
    await page.goto("/audit");
    await expect(page).toHaveURL(/\/sign-in\?next=%2Faudit$/);

    const res = await page.request.get("/api/threads");
    expect(res.status()).toBe(401);
    expect((await res.json()).code).toBe("unauthorized:session");
    // Nothing in the API either: not a thread, not the audit trail.
    expect((await page.request.get("/api/audit")).status()).toBe(401);
  });

  test("the sign-in page has no serious accessibility violations", async ({ page }) => {
    await page.goto("/sign-in");
    await expect(page.getByTestId("sign-in-form")).toHaveAttribute("data-ready", "true");
    expect(await seriousViolations(page)).toEqual([]);
    // With the error showing, too.
    await page.getByLabel("Email").fill(emailOf("viewer"));
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByTestId("sign-in-submit").click();
    await expect(page.getByTestId("sign-in-error")).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);
  });
});

test.describe("a viewer", () => {
  test.use({ storageState: storageStatePath("viewer") });

  test("reads any other question as text, line breaks and all, with nothing to press", async ({ page }) => {
    // A small order nobody else refunds: the policy approves it by itself, and the reply waits for a person.
    const threadId = await pausedThread(page, "Please refund ORD-1009, the socks have holes.", {
      orderRef: "ORD-1009",
    });
    const [pending] = (await threadState(page, threadId)).pendingInterrupts;
    if (pending.action === "refund_approval")
      await resumeAs("supervisor", threadId, pending.interruptId, { decision: "approve" });
    await page.goto(`/threads/${threadId}`);
    await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
    const email = page.getByTestId("decision-confirm_email");
    const view = email.getByTestId("payload-view");
    await expect(view).toContainText("Hello");
    // The drafted body as written: its line breaks are line breaks, never "\n" escapes. The rendered text on purpose
    // (innerText, not textContent): what the person reads is what is checked.
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point
    const shown = await view.innerText();
    expect(shown).not.toContain("\\n");
    expect(shown.split("\n").length).toBeGreaterThan(3);
    await expect(email.getByRole("button")).toHaveCount(0);
  });

  test("sees a pending refund read-only: no approve or reject, no New ticket", async ({ page }) => {
    const threadId = await pendingRefund(page);
    await page.goto(`/threads/${threadId}`);
    await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
    await expect(page.getByTestId("signed-in-as")).toContainText(`${emailOf("viewer")} · viewer`);

    const approval = page.getByTestId("decision-refund_approval");
    await expect(approval.getByTestId("decision-read-only")).toBeVisible();
    await expect(approval.getByTestId("decision-read-only")).toContainText("€249.00");
    await expect(approval.getByRole("button")).toHaveCount(0);
    await expect(page.getByTestId("approve")).toHaveCount(0);
    await expect(page.getByTestId("reject")).toHaveCount(0);
    await expect(page.getByTestId("approve-partial")).toHaveCount(0);
    await expect(page.getByRole("link", { name: "New ticket" })).toHaveCount(0);
    await expect(page.getByRole("link", { name: "Audit trail" })).toBeVisible();

    // The server agrees: a viewer's answer is refused, and the decision is still pending.
    const pending = (await threadState(page, threadId)).pendingInterrupts;
    const res = await page.request.post(`/api/threads/${threadId}/runs`, {
      data: {
        threadId,
        runId: crypto.randomUUID(),
        messages: [],
        resume: [
          { interruptId: pending[0].interruptId, status: "resolved", payload: { decision: "approve" } },
        ],
      },
    });
    expect(res.status()).toBe(403);
    expect((await res.json()).code).toBe("forbidden:role");
    const after = await threadState(page, threadId);
    expect(after.pendingInterrupts.map((p: { action: string }) => p.action)).toEqual(["refund_approval"]);
  });
});

test("an intake key files tickets but cannot decide them", async ({ page }) => {
  const threadId = await pendingRefund(page);
  const pending = (await threadState(page, threadId)).pendingInterrupts;
  const res = await page.request.post(`/api/threads/${threadId}/runs`, {
    headers: intakeHeaders(),
    data: {
      threadId,
      runId: crypto.randomUUID(),
      messages: [],
      resume: [{ interruptId: pending[0].interruptId, status: "resolved", payload: { decision: "approve" } }],
    },
  });
  expect(res.status()).toBe(403);
  expect((await res.json()).code).toBe("forbidden:api_key_scope");
});

test("the audit trail has no serious accessibility violations", async ({ page }) => {
  await page.goto("/audit");
  await expect(page.getByTestId("audit-page")).toBeVisible();
  await expect(page.getByTestId("audit-entry").first()).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
  await page.getByLabel("What").selectOption("sign_in");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/action=sign_in/);
  await expect(page.getByTestId("audit-entry").first()).toHaveAttribute("data-action", "sign_in");
  expect(await seriousViolations(page)).toEqual([]);
});
