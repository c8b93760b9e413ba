import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { newJobContext, newPage } from '../../lib/browser/context.ts';
import { launchBrowser } from '../../lib/browser/launch.ts';

/** One real Chromium per test file; contexts per test are cheap. */
export async function startBrowser(): Promise<Browser> {
  return launchBrowser();
}

export async function openPage(
  browser: Browser,
  url?: string,
): Promise<{ page: Page; context: BrowserContext }> {
  const context = await newJobContext(browser);
  const page = await newPage(context);
  if (url) {
    await page.goto(url, { waitUntil: 'load' });
  }
  return { page, context };
}

/**
 * One Chromium for the test file and a fresh context per test, whose page is handed to `use`:
 * `let page: Page; freshPageEachTest((p) => { page = p; });`
 */
export function freshPageEachTest(use: (page: Page) => void): void {
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  beforeAll(async () => {
    browser = await startBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    await context?.close();
    const opened = await openPage(browser!);
    context = opened.context;
    use(opened.page);
  });
}

/** Finds `[id] role: name` in a tree or prompt text; throws with the text when it is not there. */
export function idIn(text: string, role: string, name: string): number {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`\\[(\\d+)\\] ${role}: ${escaped}(?:$| )`, 'm').exec(text);
  if (!m) throw new Error(`no "${role}: ${name}" in:\n${text}`);
  return Number(m[1]);
}
