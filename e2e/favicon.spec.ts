import { expect, test } from "./fixtures";

/* The browser's first request on any page (issue 55): the icon is served, never a 404 in the console's log. */
test("the favicon and the page icon are served", async ({ page }) => {
  const responses: { url: string; status: number }[] = [];
  page.on("response", (r) => responses.push({ url: r.url(), status: r.status() }));
  await page.goto("/");
  await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
  const favicon = await page.request.get("/favicon.ico");
  expect(favicon.status()).toBe(200);
  expect(favicon.headers()["content-type"]).toMatch(/image\//);
  expect(responses.filter((r) => r.status === 404)).toEqual([]);
  const icon = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(icon).toBeTruthy();
  expect((await page.request.get(icon ?? "")).status()).toBe(200);
});
