/**
 * WebSockets never go through a request route, so only the embedded browser's guard proxy stands
 * between a page's (or a worker's) WebSocket and an address the policy does not allow.
 */
import http from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { openSession } from '../../lib/browser/session.ts';
import { startBrowser } from '../support/browser.ts';
import { listenOnLoopback } from '../support/serve.ts';

let site: http.Server;
let siteUrl: string;
/** A service the policy does not allow: it counts the WebSocket handshakes that reach it. */
let inside: http.Server;
let insidePort: number;
let upgrades: string[] = [];
let browser: Browser;

/** Opens a WebSocket from the page and one from a worker; says how the page's ended. */
const PAGE = (target: string) => `<!doctype html><title>ws</title><script>
window.probe = new Promise((resolve) => {
  const ws = new WebSocket('${target}/from-page');
  ws.onopen = () => resolve('open');
  ws.onerror = () => resolve('error');
  setTimeout(() => resolve('timeout'), 3000);
});
new Worker(URL.createObjectURL(new Blob(["new WebSocket('${target}/from-worker')"], { type: 'text/javascript' })));
</script>`;

beforeAll(async () => {
  inside = http.createServer((_req, res) => res.end('x'));
  inside.on('upgrade', (req, socket) => {
    upgrades.push(req.url ?? '');
    socket.destroy();
  });
  insidePort = Number(new URL(await listenOnLoopback(inside)).port);
  site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(PAGE(`ws://127.0.0.1:${insidePort}`));
  });
  siteUrl = `${await listenOnLoopback(site)}/`;
  browser = await startBrowser();
});

afterAll(async () => {
  await browser?.close();
  await closeGuardProxies();
  site?.close();
  inside?.close();
});

async function probe(allowInside: boolean) {
  upgrades = [];
  const allowHosts = [new URL(siteUrl).host, ...(allowInside ? [`127.0.0.1:${insidePort}`] : [])];
  const session = await openSession({ browser, policy: { allowPrivate: false, allowHosts }, url: siteUrl });
  try {
    const said = await session.page.evaluate('window.probe');
    // The worker's handshake, if it is let through, has arrived well within this.
    await new Promise((r) => setTimeout(r, 1000));
    return { said, upgrades: [...upgrades].sort() };
  } finally {
    await session.close();
  }
}

describe('WebSockets in the embedded browser', () => {
  it('reach no address the policy does not allow, from a page or a worker', async () => {
    const r = await probe(false);
    expect(r.upgrades).toEqual([]);
    expect(r.said).toBe('error');
  });

  it('(the probe is real: with the address allowed, both handshakes arrive)', async () => {
    const r = await probe(true);
    expect(r.upgrades).toEqual(['/from-page', '/from-worker']);
  });
});
