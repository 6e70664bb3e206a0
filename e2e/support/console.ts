import type { Page, TestInfo } from "@playwright/test";
import { expect, seriousViolations } from "../fixtures";

/*
 * What issue 12's specs check on every page they show: a screenshot at 1440 px and 390 px, light and dark; axe with
 * 0 serious/critical violations in each; and that no string shown to the operator reads like a developer's
 * (an error code, zod's wording, the API's `resume`). The words are collected from the DOM — text, and the
 * attributes people read (titles, labels, placeholders) — of every page the spec visits.
 */

/** Text an operator should never read: error codes (`type:subject`), zod's "expected …", "zod", the API's "resume". */
export const DEVELOPER_WORDS = /[a-z_]+:[a-z_]+|expected|zod|resume/;

const WIDTHS = [1440, 390] as const;
const THEMES = ["light", "dark"] as const;

/** Every string the page shows a person: visible text and the attributes read aloud or on hover. */
export async function operatorStrings(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || parent.closest("script, style, template, noscript")) continue;
      const text = node.textContent?.trim();
      if (text) out.push(text);
    }
    for (const el of document.body.querySelectorAll("[title], [aria-label], [placeholder], [alt]")) {
      for (const name of ["title", "aria-label", "placeholder", "alt"]) {
        const value = el.getAttribute(name)?.trim();
        if (value) out.push(value);
      }
    }
    for (const el of document.body.querySelectorAll("input[type=submit], input[type=button], option")) {
      const value = (el as HTMLInputElement).value?.trim();
      if (value) out.push(value);
    }
    return out;
  });
}

/**
 * Strings that are data rather than wording: a thread's raw state (a JSON tree a supervisor inspects),
 * marked in the DOM with `data-raw`.
 */
async function rawStrings(page: Page): Promise<Set<string>> {
  const raw = await page.evaluate(() =>
    [...document.body.querySelectorAll("[data-raw]")].flatMap((el) => {
      const texts: string[] = [];
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const t = n.textContent?.trim();
        if (t) texts.push(t);
      }
      return texts;
    }),
  );
  return new Set(raw);
}

/** The strings on the page that read like a developer's. */
export async function developerWords(page: Page): Promise<string[]> {
  const raw = await rawStrings(page);
  return (await operatorStrings(page)).filter((s) => !raw.has(s) && DEVELOPER_WORDS.test(s));
}

/**
 * Check the page as it is now, at both widths and in both themes: no developer words, no serious/critical axe
 * violations, nothing wider than the viewport; a full-page screenshot of each, attached to the report.
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
      expect.soft(await seriousViolations(page), `axe on ${label}`).toEqual([]);
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
