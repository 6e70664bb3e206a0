import type { Browser, Page } from "@playwright/test";
import {
  apiAs,
  createTicket,
  type E2eRole,
  expect,
  openReady,
  pausedAccountChange,
  runOverApi,
  storageStatePath,
  test,
} from "./fixtures";
import { checkScreens } from "./support/console";
import { lateOrders } from "./support/queue";

/*
 * Teams (issue 33), two of them, set up on the admin page: the refund desk (the operator) owns the refund agent, the
 * account desk (the supervisor) owns the account-change agent. Each sees and decides its own threads only — in the
 * inbox, in search and by the thread's address, which answers "not found" for the other desk's thread. The admin sees
 * both. The teams are deleted at the end, so the rest of the suite sees every thread again.
 */

async function pageAs(browser: Browser, role: E2eRole): Promise<Page> {
  const context = await browser.newContext({ storageState: storageStatePath(role) });
  return context.newPage();
}

async function teamIds(): Promise<string[]> {
  const admin = await apiAs("admin");
  try {
    const res = await admin.get("/api/admin/teams");
    return ((await res.json()) as { teams: { id: string }[] }).teams.map((t) => t.id);
  } finally {
    await admin.dispose();
  }
}

test("two teams: each desk sees and decides its own agent's threads only; the admin sees both", async ({
  page,
  browser,
}, testInfo) => {
  test.slow();
  const [order] = await lateOrders(7760, 1, 4_200);
  const refundMessage = `The kettle from ${order} stopped heating. Please refund it.`;
  const refund = await createTicket(page, refundMessage, order);
  await runOverApi(
    page,
    refund,
    { messages: [{ id: crypto.randomUUID(), role: "user", content: refundMessage }] },
    { intake: true },
  );
  const account = await pausedAccountChange(page);

  const admin = await pageAs(browser, "admin");
  try {
    // Saving a team that hides threads from someone says who first (a confirmation, accepted here).
    const warnings: string[] = [];
    admin.on("dialog", (dialog) => {
      warnings.push(dialog.message());
      void dialog.accept();
    });
    // The admin makes the two desks on the admin page.
    await openReady(admin, "/admin", "admin-console");
    const panel = admin.getByTestId("teams-panel");
    for (const name of ["Refund desk", "Account desk"]) {
      await panel.getByTestId("team-name").fill(name);
      await panel.getByTestId("team-create").click();
      await expect(panel.locator(`[data-testid="team"][data-team="${name}"]`)).toBeVisible();
    }
    const setUp = async (name: string, member: E2eRole, agent: string) => {
      const team = panel.locator(`[data-testid="team"][data-team="${name}"]`);
      await team.locator(`[data-testid="team-member"][data-email^="${member}@"]`).check();
      await team.locator(`[data-testid="team-agent"][data-agent="${agent}"]`).check();
      const saved = admin.waitForResponse((r) => r.url().includes("/api/admin/teams/") && r.status() === 200);
      await team.getByTestId("team-save").click();
      await saved;
    };
    await setUp("Refund desk", "operator", "refund");
    // The viewer is in no team: they were told, before the save, that they stop seeing the refund agent's threads.
    expect(warnings.at(-1)).toMatch(
      /Saving Refund desk hides threads[\s\S]*viewer@\S+ \(viewer\) no longer sees /,
    );
    await setUp("Account desk", "supervisor", "account_change");
    await admin.reload();
    await expect(
      panel.locator(
        '[data-testid="team"][data-team="Refund desk"] [data-testid="team-agent"][data-agent="refund"]',
      ),
    ).toBeChecked();
    await checkScreens(admin, testInfo, "admin-teams");

    // The operator (refund desk): the refund in the inbox and by its address; the account change nowhere.
    const operator = await pageAs(browser, "operator");
    await openReady(operator, "/?status=all", "inbox");
    await expect(operator.locator(`[data-thread-id="${refund}"]`).first()).toBeVisible();
    await expect(operator.locator(`[data-thread-id="${account}"]`)).toHaveCount(0);
    const missing = await operator.goto(`/threads/${account}`);
    expect(missing?.status()).toBe(404);
    await operator.goto("/search?q=ORD-1003");
    await expect(operator.getByTestId("search-page")).not.toContainText(account);
    await openReady(operator, `/threads/${refund}`, "thread-page");
    const card = operator.getByTestId("decision-refund_approval");
    await expect(card.getByTestId("approve")).toBeEnabled();
    await card.getByTestId("approve").click();
    await expect(operator.getByTestId("decision-confirm_email")).toBeVisible({ timeout: 30_000 });
    await checkScreens(operator, testInfo, "teams-operator-thread");

    // The supervisor (account desk): the account change, and not the refund.
    await openReady(page, "/?status=all", "inbox");
    await expect(page.locator(`[data-thread-id="${account}"]`).first()).toBeVisible();
    await expect(page.locator(`[data-thread-id="${refund}"]`)).toHaveCount(0);
    expect((await page.goto(`/threads/${refund}`))?.status()).toBe(404);
    await openReady(page, `/threads/${account}`, "thread-page");
    await expect(page.getByTestId("decision-review_change")).toHaveCount(2);

    // The admin sees both desks' threads.
    await openReady(admin, "/?status=all", "inbox");
    await expect(admin.locator(`[data-thread-id="${refund}"]`).first()).toBeVisible();
    await expect(admin.locator(`[data-thread-id="${account}"]`).first()).toBeVisible();
    await operator.context().close();
  } finally {
    // The rest of the suite shares this server: the teams go, and every thread is everyone's again.
    const api = await apiAs("admin");
    try {
      for (const id of await teamIds()) await api.delete(`/api/admin/teams/${id}`);
    } finally {
      await api.dispose();
      await admin.context().close();
    }
  }
});
