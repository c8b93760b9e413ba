import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeAction } from '../../lib/actions/execute.ts';
import { newJobContext, newPage } from '../../lib/browser/context.ts';
import { NetworkBlockedError } from '../../lib/browser/guard.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { installNetworkGuard } from '../../lib/browser/guard-route.ts';
import { openSession } from '../../lib/browser/session.ts';
import { startBrowser } from '../support/browser.ts';

interface Site {
  origin: string;
  port: number;
  hits: string[];
  server: http.Server;
}

function site(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, self: Site) => void,
): Promise<Site> {
  return new Promise((resolve) => {
    const self = { hits: [] as string[] } as unknown as Site;
    self.server = http.createServer((req, res) => {
      self.hits.push(req.url ?? '');
      handler(req, res, self);
    });
    self.server.listen(0, '127.0.0.1', () => {
      self.port = (self.server.address() as AddressInfo).port;
      self.origin = `http://127.0.0.1:${self.port}`;
      resolve(self);
    });
  });
}

let browser: Browser;
let secret: Site;
let allowed: Site;
const html = (res: http.ServerResponse, body: string) => {
  res.setHeader('content-type', 'text/html');
  res.end(body);
};

beforeAll(async () => {
  browser = await startBrowser();
  secret = await site((_req, res) => res.end('SECRET'));
  allowed = await site((req, res, self) => {
    const s = secret.origin;
    if (req.url === '/to-secret') return res.writeHead(302, { location: `${s}/meta` }).end();
    if (req.url === '/hop1') return res.writeHead(302, { location: `${self.origin}/hop2` }).end();
    if (req.url === '/hop2') return res.writeHead(301, { location: '/final' }).end();
    if (req.url === '/embeds')
      return html(
        res,
        `<img src="${s}/img.png"><iframe src="${s}/frame"></iframe><iframe src="/to-secret"></iframe>
         <iframe src="http://2130706433:${secret.port}/decimal"></iframe>
         <script>fetch('${s}/api').catch(() => { document.title = 'fetch refused'; })</script><p>embeds</p>`,
      );
    html(res, `<title>ok</title><p>page ${req.url}</p>`);
  });
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  secret?.server.close();
  allowed?.server.close();
});

const policy = () => ({ allowPrivate: false, allowHosts: [`127.0.0.1:${allowed.port}`] });

describe('network guard with real Chromium', () => {
  it('blocks loopback by default with the URL and the rule', async () => {
    const err = await openSession({
      browser,
      url: `${allowed.origin}/`,
      policy: { allowPrivate: false, allowHosts: [] },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkBlockedError);
    expect(err.message).toContain(`${allowed.origin}/`);
    expect(err.message).toContain('loopback');
    expect(allowed.hits).not.toContain('/');
  });

  it('lets an allow-listed host through, and follows redirects that stay allowed', async () => {
    const s = await openSession({ browser, url: `${allowed.origin}/hop1`, policy: policy() });
    try {
      expect(s.page.url()).toBe(`${allowed.origin}/final`);
      expect(await s.page.locator('p').textContent()).toBe('page /final');
    } finally {
      await s.close();
    }
  });

  it('refuses a redirect from an allowed host to a private one; the private host sees nothing', async () => {
    const before = secret.hits.length;
    const err = await openSession({ browser, url: `${allowed.origin}/to-secret`, policy: policy() }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(NetworkBlockedError);
    expect(err.message).toContain(`${secret.origin}/meta`);
    expect(secret.hits.length).toBe(before);
  });

  it('blocks images, iframes, redirects in iframes, odd spellings and fetch from a page', async () => {
    const before = secret.hits.length;
    const s = await openSession({ browser, url: `${allowed.origin}/embeds`, policy: policy() });
    try {
      await s.page.waitForFunction(() => document.title === 'fetch refused', null, { timeout: 5000 });
      await s.page.waitForTimeout(300);
      expect(secret.hits.length).toBe(before);
    } finally {
      await s.close();
    }
  });

  it('blocks a hostname that resolves to loopback and a goto in decimal or hex', async () => {
    const s = await openSession({ browser, url: `${allowed.origin}/`, policy: policy() });
    try {
      for (const url of [
        `http://localhost:${secret.port}/`,
        `http://2130706433:${secret.port}/`,
        `http://0x7f.0.0.1:${secret.port}/`,
        `http://[::ffff:127.0.0.1]:${secret.port}/`,
      ]) {
        const out = await executeAction(
          s.page,
          { method: 'goto', args: [url] },
          { checkNavigation: s.checkNavigation },
        );
        expect(out.ok, url).toBe(false);
        expect(out.error?.kind).toBe('blocked');
        expect(out.error?.message).toMatch(/loopback/);
      }
      // Even without the up-front check, the browser's own request is refused.
      const raw = await executeAction(s.page, {
        method: 'goto',
        args: [`http://localhost:${secret.port}/raw`],
      });
      expect(raw.error?.kind).toBe('blocked');
      expect(secret.hits).not.toContain('/raw');
    } finally {
      await s.close();
    }
  });

  it('guards a context it cannot proxy (remote browsers) request by request', async () => {
    const context = await newJobContext(browser);
    const guard = await installNetworkGuard(context, policy());
    const page = await newPage(context);
    await page.goto(`${allowed.origin}/embeds`);
    await page.waitForFunction(() => document.title === 'fetch refused', null, { timeout: 5000 });
    const urls = guard.blocked.map((b) => b.url);
    expect(urls).toContain(`${secret.origin}/img.png`);
    expect(urls).toContain(`${secret.origin}/api`);
    expect(guard.lastBlocked()?.rule).toContain('loopback');
    await context.close();
  });
});
