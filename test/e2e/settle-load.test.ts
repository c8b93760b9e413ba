/**
 * The mutation clock after a fresh load: what the document did while loading (parser, its scripts,
 * load handlers) is done by the load event, so a read right after it does not wait out a whole
 * quiet window; what a script adds after the load is still waited for and read.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newJobContext, newPage } from '../../lib/browser/context.ts';
import { loadedAndIdle, settle } from '../../lib/browser/settle.ts';
import { readPage } from '../../lib/ops/page-state.ts';
import { snapshotIfQuiet } from '../../lib/perception/snapshot.ts';
import { startBrowser } from '../support/browser.ts';

const items = Array.from({ length: 200 }, (_, i) => `<li>Row ${i}</li>`).join('');
const PAGES: Record<string, string> = {
  // Content the parser inserts and a script adds while the document loads.
  '/loaded': `<!doctype html><title>Loaded</title><ul id="list">${items}</ul>
    <script>for (let i = 0; i < 50; i++) { const li = document.createElement('li'); li.textContent = 'Scripted ' + i; list.append(li); }</script>
    <button>Save</button>`,
  // Content a timer adds just after the load.
  // A frame whose document comes late, at a URL the request tracker takes for a stream (so only
  // the page's load tells that it is still coming): a stand-in for a frame request reported
  // after DOMContentLoaded, which a slow machine showed.
  '/framed': `<!doctype html><title>Framed</title><h1>Outer page</h1>
    <iframe title="Late frame" src="/stream/frame"></iframe>`,
  '/stream/frame': '<!doctype html><button>Framed save</button>',
  // A frame that never comes: the page's load never ends.
  '/stuck': '<!doctype html><title>Stuck</title><h1>Stuck page</h1><iframe src="/never"></iframe>',
  // An image that never comes, on a page without frames (at a URL the request tracker takes for a
  // stream: only the page's load tells it is still coming).
  '/slow-image':
    '<!doctype html><title>Image</title><h1>Image page</h1><img src="/stream/never.png" alt="never">',
  '/late': `<!doctype html><title>Late</title><ul id="list"><li>First item</li></ul>
    <script>addEventListener('load', () => setTimeout(() => { const li = document.createElement('li'); li.textContent = 'Late item'; list.append(li); }, 10));</script>`,
};

const FRAME_DELAY_MS = 800;
/** Answers held open until the end (the image that never comes). */
const hanging: ServerResponse[] = [];
let browser: Browser;
let server: Server;
let base = '';

beforeAll(async () => {
  browser = await startBrowser();
  server = createServer((req, res) => {
    const body = PAGES[req.url ?? ''];
    const answer = () => {
      res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' });
      res.end(body ?? 'not found');
    };
    if (req.url === '/stream/frame') setTimeout(answer, FRAME_DELAY_MS);
    else if (req.url === '/stream/never.png' || req.url === '/never') hanging.push(res);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe('reading a freshly loaded page', () => {
  it('reads a page that finished loading at once, changes made while it loaded included', async () => {
    const ctx = await newJobContext(browser);
    try {
      const page = await newPage(ctx);
      await page.goto(`${base}/loaded`, { waitUntil: 'load' });
      // 150 ms of quiet asked right after the load: the parser's and the scripts' inserts, all
      // done by then, do not make the page count as busy.
      const snap = await snapshotIfQuiet(page, 150);
      expect(snap?.tree).toContain('Row 199');
      expect(snap?.tree).toContain('Scripted 49');
      expect(snap?.elements.map((e) => e.name)).toContain('Save');
    } finally {
      await ctx.close();
    }
  });

  it('still waits for and reads what a script adds right after the load', async () => {
    const ctx = await newJobContext(browser);
    try {
      const page = await newPage(ctx);
      await page.goto(`${base}/late`, { waitUntil: 'load' });
      const snap = await readPage({ page }, { budget: null });
      expect(snap.tree).toContain('First item');
      expect(snap.tree).toContain('Late item');
    } finally {
      await ctx.close();
    }
  });

  it('waits for a frame still loading after DOMContentLoaded, and reads it', async () => {
    const ctx = await newJobContext(browser);
    try {
      const page = await newPage(ctx);
      await page.goto(`${base}/framed`, { waitUntil: 'domcontentloaded' });
      const snap = await readPage({ page }, { budget: null });
      expect(snap.tree).toContain('Outer page');
      expect(snap.elements.map((e) => e.name)).toContain('Framed save');
    } finally {
      await ctx.close();
    }
  });

  it('settle does not call a page still before its load event', async () => {
    const ctx = await newJobContext(browser);
    try {
      const page = await newPage(ctx);
      await page.goto(`${base}/framed`, { waitUntil: 'domcontentloaded' });
      const res = await settle(page, { quietMs: 50, timeoutMs: 10_000 });
      expect(res.quiet).toBe(true);
      // The frame's document is there to read once settle says the page is still.
      expect(page.frames().map((f) => new URL(f.url() || 'about:blank').pathname)).toContain('/stream/frame');
      expect(await page.evaluate(() => document.readyState)).toBe('complete');
    } finally {
      await ctx.close();
    }
  });

  it('a page without frames is not held for an image still loading', async () => {
    const ctx = await newJobContext(browser);
    try {
      const page = await newPage(ctx);
      await page.goto(`${base}/slow-image`, { waitUntil: 'domcontentloaded' });
      // Held for the image, it would hit the cap and say so (quiet: false).
      expect((await settle(page, { quietMs: 50, timeoutMs: 60_000 })).quiet).toBe(true);
      expect(await loadedAndIdle(page, 60_000)).toBe(true);
    } finally {
      await ctx.close();
    }
  });

  // Its cap is far past the test's own timeout: a wait for the load would fail the test.
  it('the quick check does not wait for a frame that never comes (settle does, within its cap)', {
    timeout: 20_000,
  }, async () => {
    const ctx = await newJobContext(browser);
    try {
      const page = await newPage(ctx);
      await page.goto(`${base}/stuck`, { waitUntil: 'domcontentloaded' });
      expect(await loadedAndIdle(page, 600_000)).toBe(false);
      const res = await settle(page, { quietMs: 50, timeoutMs: 500 });
      expect(res.quiet).toBe(false);
      // Read as it is once the cap is spent.
      expect((await readPage({ page }, { budget: null })).tree).toContain('Stuck page');
    } finally {
      await ctx.close();
    }
  });
});
