/**
 * The URL of each link and image in a snapshot is the one the browser itself resolves, whatever
 * the page's scheme. Same-origin URLs travel without their origin and Node puts it back; a file:
 * page's origin is "file://" to the page but "null" to Node's URL, and pages with no origin at all
 * (about:blank) have none to put back.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { freshPageEachTest } from '../support/browser.ts';

const BODY = `<a id="rel" href="other.html">Relative</a>
<a id="abs" href="/abs/x.html">Rooted</a>
<a id="frag" href="#part">Fragment</a>
<a id="full" href="https://example.com/a/b">Elsewhere</a>
<img id="pic" src="pic.png" alt="Picture" width="10" height="10">
<button>Go</button>`;

let page: Page;
freshPageEachTest((p) => {
  page = p;
});

let dir: string;
let server: http.Server;
let base: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bfn-urls-'));
  await writeFile(join(dir, 'page.html'), BODY);
  server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(BODY);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

/** Each link's and the image's URL in the snapshot, beside the browser's own. */
async function urlsBothWays(): Promise<{
  ours: Record<string, string | undefined>;
  browser: Record<string, string>;
}> {
  const snap = await snapshot(page);
  const names = ['Relative', 'Rooted', 'Fragment', 'Elsewhere', 'Picture'];
  const ours = Object.fromEntries(names.map((n) => [n, snap.elements.find((e) => e.name === n)?.url]));
  const browser = await page.evaluate(() => {
    const href = (id: string) => (document.getElementById(id) as HTMLAnchorElement).href;
    return {
      Relative: href('rel'),
      Rooted: href('abs'),
      Fragment: href('frag'),
      Elsewhere: href('full'),
      Picture: (document.getElementById('pic') as HTMLImageElement).currentSrc,
    };
  });
  return { ours, browser };
}

describe('link and image URLs in a snapshot', () => {
  it('on a file: page, are the file URLs the browser resolves', async () => {
    await page.goto(pathToFileURL(join(dir, 'page.html')).href);
    const { ours, browser } = await urlsBothWays();
    expect(browser.Rooted).toBe('file:///abs/x.html');
    expect(ours).toEqual(browser);
  });

  it('on an http page, are the URLs the browser resolves', async () => {
    await page.goto(`${base}/dir/page.html`);
    const { ours, browser } = await urlsBothWays();
    expect(browser.Rooted).toBe(`${base}/abs/x.html`);
    expect(ours).toEqual(browser);
  });

  it('on a page with no origin (about:blank), never gain one', async () => {
    await page.setContent(BODY);
    const { ours, browser } = await urlsBothWays();
    for (const url of Object.values(ours)) expect(url ?? '').not.toMatch(/^null/);
    expect(ours.Elsewhere).toBe('https://example.com/a/b');
    expect(ours.Rooted).toBe(browser.Rooted);
  });
});
