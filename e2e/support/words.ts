import type { Page } from "@playwright/test";

/*
 * Issue 12: no string shown to an operator reads like a developer's. Collected from the DOM (text, and the
 * attributes people read) of every page the e2e runs visit: by checkScreens in the console specs, and by the
 * `operatorWords` fixture (e2e/fixtures.ts) on every page load and at the end of every test.
 */

/** Text an operator should never read: error codes (`type:subject`), zod's "expected …", "zod", the API's "resume". */
export const DEVELOPER_WORDS = /[a-z_]+:[a-z_]+|expected|zod|resume/;

/**
 * Every string the page shows a person (visible text, and the attributes read aloud or on hover), and the strings
 * that are data rather than wording: a thread's raw state and payloads (JSON a supervisor inspects), marked in the
 * DOM with `data-raw`. Read in one evaluation, so both come from the same DOM (a page that re-renders between two
 * reads — the history view polls — would otherwise show a raw value as wording).
 */
async function pageStrings(page: Page): Promise<{ shown: string[]; raw: string[] }> {
  return page.evaluate(() => {
    const shown: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || parent.closest("script, style, template, noscript")) continue;
      const text = node.textContent?.trim();
      if (text) shown.push(text);
    }
    for (const el of document.body.querySelectorAll("[title], [aria-label], [placeholder], [alt]")) {
      for (const name of ["title", "aria-label", "placeholder", "alt"]) {
        const value = el.getAttribute(name)?.trim();
        if (value) shown.push(value);
      }
    }
    for (const el of document.body.querySelectorAll("input[type=submit], input[type=button], option")) {
      const value = (el as HTMLInputElement).value?.trim();
      if (value) shown.push(value);
    }
    const raw = [...document.body.querySelectorAll("[data-raw]")].flatMap((el) => {
      const texts: string[] = [];
      const inner = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = inner.nextNode(); n; n = inner.nextNode()) {
        const t = n.textContent?.trim();
        if (t) texts.push(t);
      }
      return texts;
    });
    return { shown, raw };
  });
}

/** Every string the page shows a person: visible text and the attributes read aloud or on hover. */
export async function operatorStrings(page: Page): Promise<string[]> {
  return (await pageStrings(page)).shown;
}

/** The strings on the page that read like a developer's (raw data aside). */
export async function developerWords(page: Page): Promise<string[]> {
  const { shown, raw } = await pageStrings(page);
  const data = new Set(raw);
  return shown.filter((s) => !data.has(s) && DEVELOPER_WORDS.test(s));
}
