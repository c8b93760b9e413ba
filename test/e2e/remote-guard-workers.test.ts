/**
 * A remote browser (a call's `cdpUrl`, or the server's BROWSERFN_CDP_URL) cannot reach our guard
 * proxy, so each request is checked as it leaves. Workers are where a page's requests could slip
 * past that check: a dedicated worker, and a service worker, which runs apart from any page.
 * Nothing a page starts may reach an address the policy does not allow.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { openSession } from '../../lib/browser/session.ts';
import { type RemoteChrome, startRemoteChrome } from '../support/remote-chrome.ts';
import { listenOnLoopback } from '../support/serve.ts';

let site: http.Server;
let siteUrl: string;
/** A service the policy does not allow (loopback, another port): it counts what reaches it. */
let inside: http.Server;
let insideUrl: string;
let hits: string[] = [];
let remote: RemoteChrome;

const PAGE = (target: string) => `<!doctype html><title>workers</title><script>
window.probe = (async () => {
  const said = {};
  try { await fetch('${target}/from-page', { mode: 'no-cors' }); said.page = 'sent'; } catch (e) { said.page = 'refused'; }
  said.worker = await new Promise((resolve) => {
    const w = new Worker('/worker.js');
    w.onmessage = (e) => resolve(e.data);
    w.onerror = () => resolve('no worker');
  });
  try {
    const reg = await navigator.serviceWorker.register('/sw.js');
    const sw = reg.installing || reg.waiting || reg.active;
    said.serviceWorker = await new Promise((resolve) => {
      navigator.serviceWorker.onmessage = (e) => resolve(e.data);
      const ask = () => (reg.active || sw).postMessage('go');
      if (sw.state === 'activated') ask();
      else sw.addEventListener('statechange', () => sw.state === 'activated' && ask());
      setTimeout(() => resolve('no answer'), 5000);
    });
  } catch (e) { said.serviceWorker = 'not registered: ' + e.message; }
  return said;
})();
</script>`;

const WORKER = (target: string) =>
  `fetch('${target}/from-worker', { mode: 'no-cors' }).then(() => postMessage('sent'), () => postMessage('refused'));`;

const SERVICE_WORKER = (target: string) => `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('message', (e) => {
  e.waitUntil(fetch('${target}/from-service-worker', { mode: 'no-cors' })
    .then(() => 'sent', () => 'refused')
    .then((r) => e.source.postMessage(r)));
});`;

beforeAll(async () => {
  inside = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('internal');
  });
  insideUrl = await listenOnLoopback(inside);
  site = http.createServer((req, res) => {
    const [type, body] =
      req.url === '/worker.js'
        ? ['text/javascript', WORKER(insideUrl)]
        : req.url === '/sw.js'
          ? ['text/javascript', SERVICE_WORKER(insideUrl)]
          : ['text/html', PAGE(insideUrl)];
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  });
  siteUrl = `${await listenOnLoopback(site)}/`;
  remote = await startRemoteChrome();
});

afterAll(async () => {
  await remote?.close();
  site?.close();
  inside?.close();
});

const policy = (...more: string[]) => ({ allowPrivate: false, allowHosts: [new URL(siteUrl).host, ...more] });

async function probe(options: Parameters<typeof openSession>[0], allowInside = false) {
  hits = [];
  const allowed = allowInside ? policy(new URL(insideUrl).host) : policy();
  const session = await openSession({ ...options, policy: allowed, url: siteUrl });
  try {
    const said = (await session.page.evaluate('window.probe')) as Record<string, string>;
    // Anything sent has long arrived by now; give a late one time too.
    await new Promise((r) => setTimeout(r, 500));
    return { said, hits: [...hits] };
  } finally {
    await session.close();
  }
}

describe('in a remote browser, no worker reaches what the policy does not allow', () => {
  it('(the probe is real: with the service allowed, the page and both workers reach it)', async () => {
    const r = await probe({ cdpUrl: remote.wsUrl }, true);
    expect(r.said).toEqual({ page: 'sent', worker: 'sent', serviceWorker: 'sent' });
    expect(r.hits.sort()).toEqual(['/from-page', '/from-service-worker', '/from-worker']);
  });

  it("a call's cdpUrl", async () => {
    const r = await probe({ cdpUrl: remote.wsUrl });
    expect(r.hits).toEqual([]);
    expect(r.said.page).toBe('refused');
    expect(r.said.worker).toBe('refused');
    expect(r.said.serviceWorker).not.toBe('sent');
  });

  it("the server's own remote browser (BROWSERFN_CDP_URL)", async () => {
    const shared = await launchBrowser({ cdpUrl: remote.wsUrl });
    try {
      const r = await probe({ browser: shared });
      expect(r.hits).toEqual([]);
      expect(r.said.page).toBe('refused');
      expect(r.said.worker).toBe('refused');
      expect(r.said.serviceWorker).not.toBe('sent');
    } finally {
      await shared.close();
    }
  });
});
