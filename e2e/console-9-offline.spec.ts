import { expect, pausedThread, test } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 9: an idle page must notice that the server stopped answering. The thread page (nothing running,
 * only its quiet poll) and the inbox say "lost the connection, retrying" while requests fail, and clear it once the
 * server answers again. The server is cut off for this page alone by failing its requests (page.route).
 */

test("an idle thread page says the connection is lost while the server does not answer, and clears it after", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(page, "Refund ORD-1006 please, the lamp flickers.", {
    orderRef: "ORD-1006",
  });
  await page.goto(`/threads/${threadId}`);
  await expect(page.getByTestId("thread-page")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("decision-refund_approval")).toBeVisible();
  await expect(page.getByTestId("server-down")).toHaveCount(0);
  // Idle: the page has read the thread's events and only polls its view now (nothing streams to break).
  await expect
    .poll(async () => (await page.getByTestId("thread-page").getAttribute("data-connection")) ?? "idle")
    .toBe("idle");

  const cut = (url: URL) => url.pathname.startsWith(`/api/threads/${threadId}`);
  await page.route(cut, (route) => route.abort("connectionrefused"));
  await expect(page.getByTestId("server-down")).toContainText("Lost the connection to the server", {
    timeout: 15_000,
  });
  await checkScreens(page, testInfo, "thread-server-down");

  await page.unroute(cut);
  await expect(page.getByTestId("server-down")).toHaveCount(0, { timeout: 15_000 });
});

test("the inbox says the connection is lost while the server does not answer, and clears it after", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  await pausedThread(page, "Refund ORD-1007 please, it arrived broken.", { orderRef: "ORD-1007" });
  // No live stream for this page: the inbox falls back to polling the list, as it does when the stream is down.
  await page.route("**/api/inbox/stream", (route) => route.abort("connectionrefused"));
  await page.goto("/");
  await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("inbox-row").first()).toBeVisible();

  const cut = (url: URL) => url.pathname === "/api/threads";
  await page.route(cut, (route) => route.abort("connectionrefused"));
  await expect(page.getByTestId("server-down")).toContainText("Lost the connection to the server", {
    timeout: 15_000,
  });
  await expect(page.getByTestId("inbox-row").first()).toBeVisible(); // the last list stays
  await checkScreens(page, testInfo, "inbox-server-down");

  await page.unroute(cut);
  await expect(page.getByTestId("server-down")).toHaveCount(0, { timeout: 15_000 });
});
