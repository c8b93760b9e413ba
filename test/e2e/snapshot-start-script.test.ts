/**
 * The page reader as a start script: in the contexts we make, each top-level document defines the
 * collector before the page's own code and runs a warm-up walk once it has loaded and the browser
 * is idle. The first read then sends only the call, and reads exactly what a read that brings the
 * whole collector reads: same outline, same ids. The warm-up leaves nothing a read could mistake
 * for an earlier read, child frames get no collector until one is read, and a page that takes the
 * collector away is still read.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { playwrightDriver } from '../../lib/browser/playwright-driver.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { openPage, startBrowser } from '../support/browser.ts';

const PAGE = `<!doctype html><html><body><h1>Sign in</h1>
<form><label>Email <input name="email"></label><label>Password <input type="password"></label>
<button>Continue</button></form><a href="/help">Help</a>
<iframe src="/child" width="300" height="120" title="Captcha"></iframe></body></html>`;

let browser: Browser;
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    if (req.url === '/child') return res.end('<button>I am human</button>');
    if (req.url === '/second') return res.end('<h1>Two</h1><button>Next</button><a href="/">Back</a>');
    if (req.url === '/takes-it')
      return res.end(`<script>delete window.__bfnCollect;</script>${PAGE.replace('/child', '/second')}`);
    if (req.url === '/no-timers')
      return res.end(
        `<script>window.requestIdleCallback = () => 0; window.setTimeout = () => 0;</script>${PAGE}`,
      );
    // What a page kept across calls may hold: a collector another version installed.
    if (req.url === '/other-version')
      return res.end(
        `<script>Object.defineProperty(window, '__bfnCollect', { value: Object.assign(() => ({ url: 'stale' }), { v: 'old' }), configurable: true });</script>${PAGE.replace('/child', '/second')}`,
      );
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await startBrowser();
});
afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

/** Waits until the browser has been idle twice after `load`: the warm-up walk has had its turn. */
const idleTwice = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<void>((done) =>
        requestIdleCallback(() => requestIdleCallback(() => done(), { timeout: 2000 }), { timeout: 2000 }),
      ),
  );

/** Every main-frame expression a read sends, for the length of `work`. */
async function sent<T>(page: Page, work: () => Promise<T>): Promise<{ value: T; expressions: string[] }> {
  const driver = playwrightDriver(page);
  const proto = Object.getPrototypeOf(driver) as { evaluateText(e: string): Promise<string | undefined> };
  const spy = vi.spyOn(proto, 'evaluateText');
  try {
    const value = await work();
    return { value, expressions: spy.mock.calls.map((c) => c[0]) };
  } finally {
    spy.mockRestore();
  }
}

/** The same page read in a context without our start scripts: the collector goes with the read. */
async function plainRead(url: string) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    return await snapshot(page);
  } finally {
    await context.close();
  }
}

describe('the page reader at document start', () => {
  it('the first read sends only the call, and reads what a read bringing the collector reads', async () => {
    const { page, context } = await openPage(browser);
    try {
      await page.goto(`${base}/`, { waitUntil: 'load' });
      await idleTwice(page);
      // The warm-up walked the page (the iframe's slot got its key) and left no trace of a read.
      const traces = await page.evaluate(() => {
        const g = globalThis as unknown as Record<string, unknown>;
        const tagged = Array.from(document.querySelectorAll('*')).filter((e) => '__bfnId' in e).length;
        return {
          defined: typeof g.__bfnCollect,
          slotKey: typeof (document.querySelector('iframe') as unknown as { __bfnKey?: number }).__bfnKey,
          seen: g.__bfnSeen,
          registry: g.__bfnEls,
          tagged,
        };
      });
      expect(traces).toEqual({
        defined: 'function',
        slotKey: 'number',
        seen: undefined,
        registry: undefined,
        tagged: 0,
      });
      // A child frame gets no collector of its own until one is read.
      const child = page.frames().find((f) => f.url().endsWith('/child'))!;
      expect(await child.evaluate(() => typeof (globalThis as { __bfnCollect?: unknown }).__bfnCollect)).toBe(
        'undefined',
      );

      const { value: first, expressions } = await sent(page, () => snapshot(page));
      expect(expressions).toHaveLength(1);
      expect(expressions[0]!.length).toBeLessThan(2000);
      expect(expressions[0]).not.toContain('walkNode');

      const plain = await plainRead(`${base}/`);
      expect(first.tree).toBe(plain.tree);
      expect(first.tree).toContain('I am human');
      expect(first.elements.map((e) => [e.id, e.role, e.name])).toEqual(
        plain.elements.map((e) => [e.id, e.role, e.name]),
      );
      expect(first.elements[0]!.id).toBe(1);
    } finally {
      await context.close();
    }
  });

  it('a page that replaces the timers after the start still gets the warm-up', async () => {
    const { page, context } = await openPage(browser);
    try {
      await page.goto(`${base}/no-timers`, { waitUntil: 'load' });
      // The warm-up's walk gives the iframe's slot its key; the page itself has no timer left to wait with.
      await expect
        .poll(() =>
          page.evaluate(
            () => typeof (document.querySelector('iframe') as { __bfnKey?: number } | null)?.__bfnKey,
          ),
        )
        .toBe('number');
      expect(await page.evaluate(() => (globalThis as { __bfnSeen?: boolean }).__bfnSeen)).toBeUndefined();
    } finally {
      await context.close();
    }
  });

  it('a new document starts its ids over, read by the call alone again', async () => {
    const { page, context } = await openPage(browser);
    try {
      await page.goto(`${base}/`, { waitUntil: 'load' });
      const before = await snapshot(page);
      await page.goto(`${base}/second`, { waitUntil: 'load' });
      await idleTwice(page);
      const { value: after, expressions } = await sent(page, () => snapshot(page));
      expect(expressions).toHaveLength(1);
      expect(expressions[0]!.length).toBeLessThan(2000);
      const plain = await plainRead(`${base}/second`);
      expect(after.tree).toBe(plain.tree);
      expect(after.elements.map((e) => e.id)).toEqual(plain.elements.map((e) => e.id));
      expect(before.tree).not.toBe(after.tree);
    } finally {
      await context.close();
    }
  });

  it.each([
    ['took the collector away', '/takes-it'],
    ['holds another version of it', '/other-version'],
  ])('a page that %s is still read, the collector sent with the read', async (_, path) => {
    const { page, context } = await openPage(browser);
    try {
      await page.goto(`${base}${path}`, { waitUntil: 'load' });
      const { value, expressions } = await sent(page, () => snapshot(page));
      expect(expressions).toHaveLength(2);
      expect(expressions[1]!.length).toBeGreaterThan(10_000);
      expect(value.tree).toContain('Continue');
      expect(value.tree).toContain('Two');
    } finally {
      await context.close();
    }
  });
});
