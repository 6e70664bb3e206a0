import { expect, pausedThread, test } from "./fixtures";
import { checkScreens } from "./support/console";

/*
 * Issue 12, point 8 (responsive down to 360 px): the inbox becomes a list on a phone — each row a card, no column
 * headings on screen, nothing wider than the screen — for the pending decisions and for the thread list.
 */

test("the inbox is a list with no horizontal overflow at 390 px and 360 px, decisions and threads", async ({
  page,
}, testInfo) => {
  test.slow(); // four screens with axe per page
  const threadId = await pausedThread(
    page,
    "Refund please: the Superlongunbrokenproductnamewithoutanyspacesatallthatgoesonandon from ORD-1002 broke.",
    { orderRef: "ORD-1002" },
  );
  for (const path of ["/?limit=200", "/?status=all&limit=200"]) {
    await page.goto(path);
    await expect(page.getByTestId("inbox")).toHaveAttribute("data-ready", "true");
    const row = page.locator(`[data-thread-id="${threadId}"]`).first();
    await expect(row).toBeVisible();
    for (const width of [390, 360]) {
      await page.setViewportSize({ width, height: 800 });
      // A card: the row is laid out as a box of its own, and no column heading is on screen.
      expect(await row.evaluate((r) => getComputedStyle(r).display)).toBe("flex");
      await expect(page.locator("thead").first()).toHaveCSS("position", "absolute"); // sr-only
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `overflow at ${width} px on ${path}`).toBeLessThanOrEqual(0);
      const box = await row.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= width).toBeTruthy();
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await checkScreens(page, testInfo, path.includes("all") ? "inbox-threads-list" : "inbox-decisions-list");
  }
});
