import type { Page, TestInfo } from "@playwright/test";
import { axeViolations, expect } from "../fixtures";
import { developerWords } from "./words";

export { DEVELOPER_WORDS, developerWords, operatorStrings } from "./words";

/*
 * What issue 12's specs check on every page they show: a screenshot at 1280 px and 390 px, light and dark; axe with
 * 0 violations of any impact in each; and that no string shown to the operator reads like a developer's
 * (an error code, zod's wording, the API's `resume`). The words are collected from the DOM — text, and the
 * attributes people read (titles, labels, placeholders) — of every page the spec visits.
 */

const WIDTHS = [1280, 390] as const;
const THEMES = ["light", "dark"] as const;

/**
 * Check the page as it is now, at both widths and in both themes: no developer words, no axe violations of any
 * impact, nothing wider than the viewport; a full-page screenshot of each, attached to the report.
 */
export async function checkScreens(
  page: Page,
  testInfo: TestInfo,
  name: string,
  options: { overflow?: boolean } = {},
): Promise<void> {
  const before = page.viewportSize();
  expect.soft(await developerWords(page), `developer words on ${name}`).toEqual([]);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const colorScheme of THEMES) {
      await page.emulateMedia({ colorScheme });
      await page.waitForTimeout(50); // layout settles after the media change
      const label = `${name}-${width}-${colorScheme}`;
      expect.soft(await axeViolations(page), `axe on ${label}`).toEqual([]);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (options.overflow !== false) {
        expect.soft(overflow, `horizontal overflow on ${label}`).toBeLessThanOrEqual(0);
      }
      const path = testInfo.outputPath(`${label}.png`);
      await page.screenshot({ path, fullPage: true });
      await testInfo.attach(label, { path, contentType: "image/png" });
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  if (before) await page.setViewportSize(before);
}
