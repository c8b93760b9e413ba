/**
 * Held reads (perception/held-read.ts): read-only calls in a row on a page nobody touched read it
 * once, and anything that changes the page — its own scripts, typing, scrolling, our actions,
 * navigation — makes the next call read it afresh.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { act } from '../../lib/ops/act.ts';
import { extract } from '../../lib/ops/extract.ts';
import { observe } from '../../lib/ops/observe.ts';
import { readAhead } from '../../lib/ops/page-state.ts';
import type { OpContext } from '../../lib/ops/types.ts';
import { watchChanges } from '../../lib/perception/held-read.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let browser: Browser;
let site: FixtureServer;
let context: BrowserContext | undefined;
beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

async function open(path: string): Promise<Page> {
  const opened = await openPage(browser, `${site.url}${path}`);
  context = opened.context;
  return opened.page;
}

const session = (page: Page): OpContext => ({ page, reuseReads: true });

/** Counts the page's own walks from now on (the collector is installed by the first read). */
async function countWalks(page: Page): Promise<() => Promise<number>> {
  await page.evaluate(() => {
    const g = globalThis as unknown as Record<string, unknown>;
    const collect = g.__bfnCollect as ((o: unknown) => unknown) & { v: string };
    g.__walks = 0;
    // The counter stands in for the collector, so it carries what the collector carries: its
    // version (a call only uses a collector of its own version) and what writes its text out.
    const counting = (o: unknown) => {
      g.__walks = (g.__walks as number) + 1;
      return collect(o);
    };
    Object.defineProperty(g, '__bfnCollect', {
      value: Object.assign(counting, collect),
      configurable: true,
    });
  });
  return () => page.evaluate(() => (globalThis as unknown as { __walks: number }).__walks);
}

/** How often the page is walked by two more observes, after a first one. */
async function walksOfTwoMoreObserves(ctx: OpContext): Promise<number> {
  await observe(ctx);
  const walks = await countWalks(ctx.page as Page);
  await observe(ctx);
  await observe(ctx);
  return walks();
}

const pageText = async (ctx: OpContext) => ((await extract(ctx)).data as { pageText: string }).pageText;
const names = async (ctx: OpContext) => (await observe(ctx)).elements.map((e) => e.name);

describe('held reads', () => {
  it('an observe then an extract on an unchanged page read it once and agree', async () => {
    const page = await open('/login.html');
    const ctx = session(page);
    const first = await observe(ctx);
    const walks = await countWalks(page);
    const text = await pageText(ctx);
    const again = await observe(ctx);
    expect(await walks()).toBe(0);
    expect(text).toContain('Sign in to Acme');
    expect(again.elements).toEqual(first.elements);
  });

  it('calls outside a session read the page every time', async () => {
    const page = await open('/login.html');
    expect(await walksOfTwoMoreObserves({ page })).toBe(2);
  });

  it('a button the page adds by itself afterwards is seen by the next call', async () => {
    const page = await open('/login.html');
    const ctx = session(page);
    expect(await names(ctx)).not.toContain('Later');
    await page.evaluate(() =>
      setTimeout(() => {
        const b = document.createElement('button');
        b.textContent = 'Later';
        document.querySelector('main')!.append(b);
      }, 20),
    );
    await page.waitForSelector('text=Later');
    expect(await names(ctx)).toContain('Later');
  });

  it('text typed into a field, with no change to the DOM tree, is seen by the next extract', async () => {
    const page = await open('/login.html');
    const ctx = session(page);
    expect(await pageText(ctx)).not.toContain('typed@acme.test');
    await page.locator('#email').pressSequentially('typed@acme.test');
    expect(await pageText(ctx)).toContain('value="typed@acme.test"');
  });

  it('our own act makes the next read fresh', async () => {
    const page = await open('/login.html');
    const ctx = session(page);
    await observe(ctx);
    const walks = await countWalks(page);
    const done = await act(ctx, 'type "acted@acme.test" into the Email field');
    expect(done.success).toBe(true);
    const before = await walks();
    expect(await pageText(ctx)).toContain('value="acted@acme.test"');
    expect(await walks()).toBe(before + 1);
  });

  it('after an action, a read ahead has the page read before the next call comes', async () => {
    const page = await open('/login.html');
    const ctx = session(page);
    await observe(ctx);
    const walks = await countWalks(page);
    expect((await act(ctx, 'type "ahead@acme.test" into the Email field')).success).toBe(true);
    const byAct = await walks();
    readAhead(ctx);
    await page.waitForFunction((n) => (globalThis as unknown as { __walks: number }).__walks > n, byAct);
    const text = await pageText(ctx);
    expect(text).toContain('value="ahead@acme.test"');
    // The extract asked nothing of the page: the read ahead had done it.
    expect(await walks()).toBe(byAct + 1);
  });

  it('calls on one held read each get the page as they asked: their secrets hidden, their keywords kept', async () => {
    const page = await open('/login.html');
    await page.fill('#email', 'ada.private@acme.test');
    const plain = () => snapshot(page, { reuse: true, budget: 6000 });
    const hidden = () =>
      snapshot(page, { reuse: true, budget: 6000, secrets: { mail: 'ada.private@acme.test' } });
    const first = await plain();
    const walks = await countWalks(page);
    // Asked the same way of an unchanged page: the snapshot already built, not a new one.
    expect(await plain()).toBe(first);
    expect(first.tree).toContain('ada.private@acme.test');
    expect((await hidden()).tree).not.toContain('ada.private@acme.test');
    expect((await hidden()).tree).toContain('%mail%');
    expect((await plain()).tree).toContain('ada.private@acme.test');
    expect(await walks()).toBe(0);

    await page.goto(`${site.url}/store.html`);
    const under = (word: string) => snapshot(page, { reuse: true, budget: 400, keywords: [word] });
    await under('Footer');
    const footer = await under('Footer');
    const prairie = await under('Prairie');
    expect(footer.omitted).toBeDefined();
    expect(footer.tree).toMatch(/Footer link 1$/m);
    expect(prairie.tree).not.toMatch(/Footer link 1$/m);
    expect(prairie.tree).toContain('Prairie');
    expect((await under('Footer')).tree).toBe(footer.tree);
  });

  it('scrolling is seen: what left the viewport is no longer marked in it', async () => {
    const page = await open('/scroll.html');
    const inView = async () =>
      (await snapshot(page, { reuse: true })).elements.filter((e) => e.inViewport).map((e) => e.id);
    const top = await inView();
    await page.mouse.wheel(0, 3000);
    await page.waitForFunction(() => window.scrollY > 1000);
    const lower = await inView();
    expect(top.length).toBeGreaterThan(0);
    expect(lower).not.toEqual(top);
  });

  it('a new document is read afresh, never answered from the last one', async () => {
    const page = await open('/login.html');
    const ctx = session(page);
    expect(await names(ctx)).toContain('Remember me');
    await page.goto(`${site.url}/signup.html`);
    const after = await names(ctx);
    expect(after).not.toContain('Remember me');
    expect(after.length).toBeGreaterThan(0);
  });

  it('a page with frames is read afresh every time', async () => {
    const page = await open('/iframes.html');
    expect(await walksOfTwoMoreObserves(session(page))).toBe(2);
  });

  it('leaves the page no Playwright binding, and takes its own notice out of sight once armed', async () => {
    const page = await open('/login.html');
    const ctx = session(page);
    const globals = () =>
      page.evaluate(() => Object.getOwnPropertyNames(window).filter((k) => /playwright|Changed/i.test(k)));
    await observe(ctx);
    expect(await globals()).toEqual([]);
    // A new document gets the binding again, and loses it from sight at its first read.
    await page.goto(`${site.url}/signup.html`);
    await observe(ctx);
    expect(await globals()).toEqual([]);
    // …and keeps working there: held while nothing changes, dropped by typing.
    const walks = await countWalks(page);
    await observe(ctx);
    expect(await walks()).toBe(0);
    await page.locator('input').first().pressSequentially('x');
    await observe(ctx);
    expect(await walks()).toBe(1);
  });

  it('a page that takes the change notice away before the first read gets no held reads', async () => {
    const page = await open('/login.html');
    expect(await watchChanges(page)).toBe(true);
    await page.evaluate(() => {
      delete (globalThis as unknown as Record<string, unknown>).__bfnChanged;
    });
    expect(await walksOfTwoMoreObserves(session(page))).toBe(2);
  });
});
