import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { FIXTURE_PAGES } from '../fixtures/manifest.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { locatorMismatches } from '../support/roundtrip.ts';

let browser: Browser;
let site: FixtureServer;
beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();

describe.each(FIXTURE_PAGES)('snapshot of $path', (fixture) => {
  it('shows every target with an id, and every id finds its element again', async () => {
    const { page, context } = await openPage(browser, site.url + fixture.path);
    try {
      // Let iframes and custom elements finish loading.
      await page.waitForLoadState('load');
      await page.waitForTimeout(50);
      const snap = await snapshot(page);
      expect(snap.title).toBe(fixture.title);
      for (const t of fixture.targets) {
        const hit = snap.elements.find((e) => e.role === t.role && norm(e.name) === norm(t.name));
        expect(hit, `${t.role} "${t.name}" missing from\n${snap.tree}`).toBeTruthy();
        expect(snap.tree).toContain(`[${hit!.id}] ${hit!.role}`);
        if (t.frame === 'iframe') expect(hit!.frame).toBeGreaterThan(0);
        if (t.frame === 'shadow') expect(hit!.locator.xpath).toContain(' >> ');
      }
      // Every interactive element is addressable, and its locator resolves back to itself.
      const interactive = snap.elements.filter((e) => e.interactive);
      expect(interactive.length).toBeGreaterThan(0);
      expect(await locatorMismatches(page, snap)).toEqual([]);
    } finally {
      await context.close();
    }
    // The large page checks thousands of locators one round trip at a time: minutes on a busy machine.
  }, 400_000);
});
