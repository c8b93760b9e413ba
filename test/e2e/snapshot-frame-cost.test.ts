/**
 * What reading a page's frames costs on a real-world page (frames with no document — a
 * `javascript:` src, a load that never answers — are not waited for at all): a visible iframe is read and stitched
 * under its slot, found by the key its own read reports (same origin: no lookup of its <iframe>); a 0×0 one (a tracker's) and one whose document failed to load (the browser's own
 * error page, here also in a visible slot) add nothing, and once the page has been read they cost
 * no round trip either: neither is asked, and no <iframe> is looked up again until a new frame or a
 * new slot appears — as when the failed slot loads a page after all, or the tracker's gets a size.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { executeAction } from '../../lib/actions/execute.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { openPage, startBrowser } from '../support/browser.ts';

const MAIN = `<!doctype html><html><body><h1>Sign in</h1>
<iframe src="/child" width="300" height="150" title="Captcha"></iframe>
<iframe srcdoc="<button>Tracker</button>" style="width:0;height:0;border:0"></iframe>
<iframe src="/drop" style="width:0;height:0;border:0"></iframe>
<iframe id="ad" src="/drop" width="200" height="100"></iframe>
<iframe src="javascript:false"></iframe>
<iframe src="/hang" width="120" height="60"></iframe>
<button>Continue</button></body></html>`;

let browser: Browser;
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    // A connection dropped without an answer: the frame shows the browser's error page.
    if (req.url === '/drop') return req.socket.destroy();
    // Never answered: the frame's document never commits, and an evaluate in it would wait forever.
    if (req.url === '/hang') return;
    res.writeHead(200, { 'content-type': 'text/html' });
    if (req.url === '/hidden-only')
      return res.end(
        '<h1>Sign in</h1><iframe srcdoc="<p>pixel</p>" style="display:none"></iframe><iframe srcdoc="<p>tag</p>" style="display:none"></iframe><button>Go</button>',
      );
    const child = { '/child': '<button>I am human</button>', '/later': '<a href="#">Later offer</a>' }[
      req.url ?? ''
    ];
    res.end(child ?? MAIN);
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

/** Records the URL of every frame asked through Playwright's evaluate (how child frames are read). */
function spyOnFrameReads(proto: Frame) {
  const original = proto.evaluate;
  const asked: string[] = [];
  const evaluate = vi.spyOn(proto, 'evaluate').mockImplementation(function (this: Frame, ...args: unknown[]) {
    asked.push(this.url());
    return Reflect.apply(original, this, args) as ReturnType<Frame['evaluate']>;
  } as Frame['evaluate']);
  return { asked, evaluate };
}

describe('frames on a real-world page', () => {
  it('reads the visible iframe; the hidden and the failed ones cost no round trip once the page is read', async () => {
    const { page, context } = await openPage(browser);
    // The frame that never answers holds the load event back: the page is read once it is parsed.
    await page.goto(`${base}/`, { waitUntil: 'domcontentloaded' });
    try {
      await expect
        .poll(() => page.frames().some((f) => f.url().startsWith('chrome-error:')), { timeout: 30_000 })
        .toBe(true);
      const proto = Object.getPrototypeOf(page.mainFrame()) as Frame;
      // Same-origin frames say which <iframe> holds them: not one is looked up, even on the first read.
      const lookups = vi.spyOn(proto, 'frameElement');
      let first: Awaited<ReturnType<typeof snapshot>>;
      try {
        first = await snapshot(page);
        expect(lookups).not.toHaveBeenCalled();
      } finally {
        lookups.mockClear();
      }
      expect(first.tree).toContain('I am human');
      expect(first.tree).toContain('Continue');
      expect(first.tree).not.toContain('Tracker');

      const { asked, evaluate } = spyOnFrameReads(proto);
      try {
        const again = await snapshot(page);
        expect(again.tree).toBe(first.tree);
        expect(lookups).not.toHaveBeenCalled();
        // Neither the error pages nor the 0×0 tracker are asked: only the visible slot's frame.
        expect(asked.filter((u) => u.startsWith('chrome-error:') || u === 'about:srcdoc')).toEqual([]);
        // Nor the frames with no document yet (a `javascript:` src, a load that never answers).
        expect(asked).not.toContain('');
        expect(asked).toContain(`${base}/child`);
      } finally {
        lookups.mockRestore();
        evaluate.mockRestore();
      }
      // The failed slot's frame loads a page after all: it is found and read under its slot.
      await page.evaluate(() => document.getElementById('ad')!.setAttribute('src', '/later'));
      await expect
        .poll(async () => (await snapshot(page)).tree, { timeout: 30_000 })
        .toContain('Later offer');
      // And the tracker's iframe, once it has a size, is read again and shown under its slot.
      await page.evaluate(() => {
        (document.querySelector('iframe[srcdoc]') as HTMLElement).style.cssText = 'width:200px;height:80px';
      });
      expect((await snapshot(page)).tree).toContain('Tracker');
    } finally {
      await context.close();
    }
  });

  it('a wait for text is not held up by a frame whose load never answers', async () => {
    const { page, context } = await openPage(browser);
    try {
      await page.goto(`${base}/`, { waitUntil: 'domcontentloaded' });
      expect(page.frames().some((f) => f.url() === '')).toBe(true);
      const waited = await executeAction(
        page,
        { method: 'wait', args: ['text:Continue'] },
        { timeoutMs: 60_000 },
      );
      expect(waited).toMatchObject({ ok: true, message: 'waited for "Continue"' });
    } finally {
      await context.close();
    }
  });

  it('a page whose every iframe is hidden: after the first read, none of them is read again', async () => {
    const { page, context } = await openPage(browser, `${base}/hidden-only`);
    try {
      expect(page.frames()).toHaveLength(3);
      const first = await snapshot(page);
      const proto = Object.getPrototypeOf(page.mainFrame()) as Frame;
      const { asked, evaluate } = spyOnFrameReads(proto);
      try {
        expect((await snapshot(page)).tree).toBe(first.tree);
        expect(asked).toEqual([]);
      } finally {
        evaluate.mockRestore();
      }
    } finally {
      await context.close();
    }
  });
});
