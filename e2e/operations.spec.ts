import { sqlFor } from "./api/client";
import { createUsersAndKey } from "./auth/users";
import {
  ACCOUNT_CHANGE_MESSAGE,
  expect,
  pausedAccountChange,
  pausedThread,
  registerIntakeKey,
  runOverApi,
  seriousViolations,
  signInOver,
  test,
} from "./fixtures";
import { checkScreens } from "./support/console";
import { type FakePaymentProvider, startFakePaymentProvider } from "./support/fake-payment";
import { createTestDatabase } from "./support/pg";
import { metricValue, parsePrometheus } from "./support/prometheus";
import { startTestServer, type TestServer } from "./support/server";

/*
 * The operations page as a supervisor sees it: the queue now (the same numbers /api/metrics reports), the queue over
 * time from the samples, decisions per hour by outcome, and what failed. A server of its own: the queue sampled every
 * second, and a payment provider that is down with one attempt allowed, so an approved refund's payment fails.
 */
test.describe.configure({ timeout: 120_000 });

const METRICS_TOKEN = "operations-spec-metrics-token-0123456789";
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let server: TestServer;
let provider: FakePaymentProvider;
let sql: ReturnType<typeof sqlFor>;

test.beforeAll(async () => {
  provider = await startFakePaymentProvider();
  provider.setFaults({ down: true });
  database = await createTestDatabase("e2e_operations");
  sql = sqlFor(database.url);
  server = await startTestServer({
    databaseUrl: database.url,
    signIn: false,
    env: {
      BETTER_AUTH_SECRET: process.env.BETTER_AUTH_SECRET ?? "",
      ADMIN_EMAIL: process.env.ADMIN_EMAIL ?? "",
      ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? "",
      SIGN_IN_RATE_LIMIT: "10000",
      METRICS_TOKEN,
      OPS_SAMPLE_INTERVAL_MS: "1000",
      // A payout change waits an hour after both reviews: a durable timer, which is not pending work.
      ACCOUNT_CHANGE_COOLOFF_MS: "3600000",
      PAYMENT_URL: provider.url,
      PAYMENT_TIMEOUT_MS: "1000",
      EFFECT_POLL_MS: "200",
      EFFECT_MAX_ATTEMPTS: "1",
    },
  });
  registerIntakeKey(server.url, await createUsersAndKey(server.url));
});

test.afterAll(async () => {
  await server?.stop();
  await sql?.end();
  await database?.drop();
  await provider?.close();
});

test("a supervisor sees the queue, decisions by outcome and failures, with the numbers of /api/metrics", async ({
  page,
}) => {
  await signInOver(page.request, server.url, "supervisor");
  const threads: string[] = [];
  for (const order of ["ORD-1002", "ORD-1008", "ORD-1004"]) {
    threads.push(await pausedThread(page, `Refund ${order} please, it broke.`, { base: server.url }));
  }
  // One approval: the refund's payment fails (the provider is down) and the reply waits for confirmation.
  const state = await (await page.request.get(`${server.url}/api/threads/${threads[0]}`)).json();
  await runOverApi(
    page,
    threads[0] as string,
    {
      resume: [
        {
          interruptId: state.pendingInterrupts[0].interruptId,
          status: "resolved",
          payload: { decision: "approve" },
        },
      ],
    },
    { base: server.url },
  );
  await expect.poll(async () => await sql.count("effects", "status = 'failed'"), { timeout: 20_000 }).toBe(1);
  // A payout change, both reviews approved by two people: it waits on its cooling-off timer.
  const changeId = await pausedAccountChange(page, ACCOUNT_CHANGE_MESSAGE, "ORD-1003", server.url);
  const reviews = (await (await page.request.get(`${server.url}/api/threads/${changeId}`)).json())
    .pendingInterrupts as { interruptId: string; payload: { review: string } }[];
  const review = (kind: string) => reviews.find((r) => r.payload.review === kind)?.interruptId;
  for (const [role, kind] of [
    ["supervisor", "fraud"],
    ["operator", "data"],
  ] as const) {
    await signInOver(page.request, server.url, role);
    const res = await page.request.post(`${server.url}/api/threads/${changeId}/decisions/${review(kind)}`, {
      data: { answer: { decision: "approve" } },
    });
    expect(res.status(), `${kind} review`).toBeLessThan(300);
  }
  await signInOver(page.request, server.url, "supervisor");
  await expect
    .poll(
      async () =>
        sql.count("decisions", "thread_id = $1 AND status = 'pending' AND action = 'wait_timer'", [changeId]),
      {
        timeout: 20_000,
      },
    )
    .toBe(1);
  // A few queue samples (one a second).
  await expect.poll(async () => sql.count("queue_samples"), { timeout: 20_000 }).toBeGreaterThanOrEqual(3);

  await page.goto(`${server.url}/operations`);
  await expect(page.getByTestId("operations-ready")).toBeVisible();
  const metrics = parsePrometheus(
    await (
      await page.request.get(`${server.url}/api/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      })
    ).text(),
  );
  const pending = metricValue(metrics, "hitl_decisions_pending");
  expect(pending).toBe(3); // two refund approvals, one reply to confirm — the cooling-off timer is not work
  expect(metricValue(metrics, "hitl_timers_waiting")).toBe(1);
  await expect(page.getByTestId("ops-pending")).toHaveText(String(pending));
  await expect(page.getByTestId("ops-pending-note")).toHaveText("and 1 timer running by itself");
  await expect(page.getByTestId("ops-failed-effects")).toHaveText("1");
  await expect(page.getByTestId("ops-failed-threads")).toHaveText("0");
  await expect(page.getByTestId("ops-oldest")).not.toHaveText("none");
  await expect(page.getByTestId("decisions-by-outcome")).toContainText("approve");
  await expect(page.getByTestId("failed-effects")).toContainText("payment");
  for (const chart of ["chart-queue", "chart-decisions", "chart-failed"]) {
    await expect(page.getByTestId(chart)).toHaveAttribute("data-drawn", "true");
    await expect(page.getByTestId(chart).locator("canvas")).toBeVisible();
  }
  await page.screenshot({ path: test.info().outputPath("operations.png"), fullPage: true });
  // The charts are canvases hidden from screen readers (the numbers are in the tiles and tables): nothing serious.
  expect(await seriousViolations(page)).toEqual([]);

  // Operators do not see it.
  await signInOver(page.request, server.url, "operator");
  await page.goto(`${server.url}/operations`);
  await expect(page).toHaveURL(/not-allowed\?need=supervisor/);
});

test("the reconciliation report: an admin reconciles now, the refund the provider forgot is a difference with both sides, a supervisor closes it", async ({
  page,
}, testInfo) => {
  provider.setFaults({});
  await signInOver(page.request, server.url, "supervisor");
  const threadId = await pausedThread(page, "Refund ORD-1006 please, the lamp broke.", { base: server.url });
  const state = await (await page.request.get(`${server.url}/api/threads/${threadId}`)).json();
  await runOverApi(
    page,
    threadId,
    {
      resume: [
        {
          interruptId: state.pendingInterrupts[0].interruptId,
          status: "resolved",
          payload: { decision: "approve" },
        },
      ],
    },
    { base: server.url },
  );
  await expect
    .poll(
      async () =>
        sql.count("effects", "thread_id = $1 AND kind = 'payment' AND status = 'delivered'", [threadId]),
      {
        timeout: 20_000,
      },
    )
    .toBe(1);
  const [paid] = await sql.rows<{ key: string }>(
    "SELECT idempotency_key AS key FROM effects WHERE thread_id = $1 AND kind = 'payment'",
    [threadId],
  );
  // The provider no longer knows the refund the ledger says it paid.
  provider.forget(paid!.key);

  await signInOver(page.request, server.url, "admin");
  await page.goto(`${server.url}/operations/reconciliation`);
  await expect(page.getByTestId("reconciliation-schedule")).toContainText(
    "Compared with the payment provider",
  );
  await page.getByRole("button", { name: "Reconcile now" }).click();
  const finding = page.locator('[data-testid="finding"][data-kind="missing_at_provider"]');
  await expect(finding).toContainText("Recorded as paid here, unknown to the provider");
  await expect(finding).toContainText("ORD-1006");
  await expect(finding).toContainText("nothing held");
  await expect(page.getByTestId("reconciliation-runs")).toContainText("Done");
  await checkScreens(page, testInfo, "reconciliation");

  await signInOver(page.request, server.url, "supervisor");
  await page.goto(`${server.url}/operations`);
  await expect(page.getByTestId("reconciliation-open")).toHaveText("1");
  await page.getByRole("link", { name: "Reconciliation report" }).click();
  await finding.getByRole("button", { name: "Mark handled" }).click();
  await expect(finding).toContainText("closed by");
  expect(await sql.count("provider_findings", "status = 'handled'")).toBe(1);
  expect(await sql.count("audit_log", "action = 'provider_finding'")).toBe(2);
});
