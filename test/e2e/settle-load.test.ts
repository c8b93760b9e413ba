/**
 * The mutation clock after a fresh load: what the document did while loading (parser, its scripts,
 * load handlers) is done by the load event, so a read right after it does not wait out a whole
 * quiet window; what a script adds after the load is still waited for and read.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newJobContext, newPage } from '../../lib/browser/context.ts';
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
  '/late': `<!doctype html><title>Late</title><ul id="list"><li>First item</li></ul>
    <script>addEventListener('load', () => setTimeout(() => { const li = document.createElement('li'); li.textContent = 'Late item'; list.append(li); }, 10));</script>`,
};

let browser: Browser;
let server: Server;
let base = '';

beforeAll(async () => {
  browser = await startBrowser();
  server = createServer((req, res) => {
    const body = PAGES[req.url ?? ''];
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' });
    res.end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
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
});
