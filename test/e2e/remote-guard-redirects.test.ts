/**
 * A remote browser has no proxy of ours in front of it, and Playwright's route is never asked about
 * a redirect hop. A hop to an address the policy does not allow must still never leave the browser
 * (each page's Fetch pause, guard-fetch.ts): the main frame's makes the page a blocked one, a child
 * frame's leaves the frame unread, and an image's, a fetch's, a worker's or a service worker's
 * fetch's, or a cross-site frame's (in a process of its own) never arrives.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newJobContext, newPage } from '../../lib/browser/context.ts';
import { NetworkBlockedError } from '../../lib/browser/guard.ts';
import { installNetworkGuard } from '../../lib/browser/guard-route.ts';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { openSession } from '../../lib/browser/session.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { type RemoteChrome, startRemoteChrome } from '../support/remote-chrome.ts';
import { listenOnLoopback } from '../support/serve.ts';

/** What the service behind the redirect answers: none of it may reach a caller. */
const BANNER = 'INTERNAL-ADMIN-BANNER-51c2';

let site: http.Server;
let siteUrl: string;
let inside: http.Server;
let insideUrl: string;
let remote: RemoteChrome;
/** Every request the service behind the redirects received. */
const insideHits: string[] = [];

beforeAll(async () => {
  inside = http.createServer((req, res) => {
    insideHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>admin</title><h1>${BANNER}</h1><button>Delete everything</button>`);
  });
  insideUrl = await listenOnLoopback(inside);
  site = http.createServer((req, res) => {
    if (req.url === '/go') {
      res.writeHead(302, { location: `${insideUrl}/admin` });
      res.end();
      return;
    }
    // Subresources sent on to the service: an image, a fetch(), a worker's fetch().
    const hop = /^\/hop\/([\w-]+)$/.exec(req.url ?? '');
    if (hop) {
      res.writeHead(302, { location: `${insideUrl}/from-${hop[1]}` });
      res.end();
      return;
    }
    if (req.url === '/worker.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end("fetch('/hop/worker').then(() => postMessage('done'), () => postMessage('done'));");
      return;
    }
    // A service worker (its scope holds its page) whose fetches are redirected on.
    const sw = /^\/sw-(\w+)\/(page|sw\.js)$/.exec(req.url ?? '');
    if (sw?.[2] === 'sw.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(`fetch('/hop/sw-top-${sw[1]}').catch(() => undefined);
        self.addEventListener('install', (e) => e.waitUntil(fetch('/hop/sw-install-${sw[1]}').catch(() => undefined)));`);
      return;
    }
    if (sw?.[2] === 'page') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><h1>Worker page</h1><script>
        navigator.serviceWorker.register('/sw-${sw[1]}/sw.js');
        navigator.serviceWorker.ready.then(() => { document.title = 'finished'; });
      </script>`);
      return;
    }
    if (req.url === '/opener') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><h1>Opener page</h1><script>window.open('/go');</script>`);
      return;
    }
    if (req.url === '/isolated-child') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><p>Child page</p><img src="/hop/child-image" alt="x">
        <script>fetch('/hop/child-fetch').catch(() => undefined).then(() => { document.title = 'finished'; });</script>`);
      return;
    }
    if (req.url === '/isolated') {
      // The same server under another site's name: a frame in its own process.
      const port = new URL(siteUrl).port;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<!doctype html><h1>Outer page</h1><iframe src="http://localhost:${port}/isolated-child"></iframe>`,
      );
      return;
    }
    if (req.url === '/subresources') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>subresources</title><h1>Outer page</h1><img src="/hop/image" alt="x">
        <script>
          const worker = new Worker('/worker.js');
          Promise.all([
            fetch('/hop/fetch').catch(() => undefined),
            new Promise((done) => { worker.onmessage = done; }),
          ]).then(() => { document.title = 'finished'; });
        </script>`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      '<!doctype html><title>outer</title><h1>Outer page</h1><iframe src="/go" width="400" height="200"></iframe><button>Outer button</button>',
    );
  });
  siteUrl = await listenOnLoopback(site);
  // Site isolation on, as hosted browsers run: a cross-site frame is a process (a target) of its own.
  remote = await startRemoteChrome([], ['--site-per-process']);
});

afterAll(async () => {
  await remote?.close();
  site?.close();
  inside?.close();
});

const policy = (...more: string[]) => ({
  allowPrivate: false,
  allowHosts: [new URL(siteUrl).host, `localhost:${new URL(siteUrl).port}`, ...more],
});

/** Waits until `check` holds, for at most `ms` (a frame sent away settles on its own time). */
async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('a remote browser redirected to an address the policy does not allow', () => {
  it('refuses a page whose own navigation is redirected there', async () => {
    const opened = openSession({ cdpUrl: remote.wsUrl, policy: policy(), url: `${siteUrl}/go` });
    const err = await opened.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NetworkBlockedError);
    expect((err as Error).message).toContain(new URL(insideUrl).host);
  });

  it('refuses it the same way in the server-wide remote browser (BROWSERFN_CDP_URL)', async () => {
    const shared = await launchBrowser({ cdpUrl: remote.wsUrl });
    try {
      await expect(
        openSession({ browser: shared, policy: policy(), url: `${siteUrl}/go` }),
      ).rejects.toBeInstanceOf(NetworkBlockedError);
    } finally {
      await shared.close();
    }
  });

  it('never reads a child frame redirected there: the hop never leaves', async () => {
    const before = insideHits.length;
    const session = await openSession({ cdpUrl: remote.wsUrl, policy: policy(), url: `${siteUrl}/framed` });
    try {
      const snap = await snapshot(session.page);
      expect(snap.tree).toContain('Outer page');
      expect(snap.tree).toContain('Outer button');
      expect(snap.tree).not.toContain(BANNER);
      expect(snap.tree).not.toContain('Delete everything');
      const child = () => session.page.frames().find((f) => f !== session.page.mainFrame());
      // The frame shows the browser's error page (or, sent away, about:blank), never the service.
      expect(await eventually(() => /^(chrome-error:|about:blank)/.test(child()?.url() ?? ''))).toBe(true);
      expect((await snapshot(session.page)).tree).not.toContain(BANNER);
      expect(insideHits.slice(before)).toEqual([]);
    } finally {
      await session.close();
    }
  });

  it("stops page and frame hops with the context's guard alone (a Stagehand protocol session's)", async () => {
    const shared = await launchBrowser({ cdpUrl: remote.wsUrl });
    const context = await newJobContext(shared);
    try {
      const before = insideHits.length;
      const guard = await installNetworkGuard(context, policy());
      const framed = await newPage(context);
      await guard.ready(framed);
      await framed.goto(`${siteUrl}/framed`);
      const child = () => framed.frames().find((f) => f !== framed.mainFrame());
      const away = (url = '') => /^(chrome-error:|about:blank)/.test(url);
      expect(await eventually(() => away(child()?.url()))).toBe(true);
      expect((await snapshot(framed)).tree).not.toContain(BANNER);
      const page = await newPage(context);
      await guard.ready(page);
      await page.goto(`${siteUrl}/go`).catch(() => undefined);
      expect(await eventually(() => away(page.url()))).toBe(true);
      expect(insideHits.slice(before)).toEqual([]);
      // The two hops (the frame's, the page's); anything else refused is the same service's too.
      const hops = guard.blocked.filter((b) => b.resourceType === 'document').map((b) => b.url);
      expect(hops).toEqual([`${insideUrl}/admin`, `${insideUrl}/admin`]);
      expect(guard.blocked.every((b) => b.url.startsWith(insideUrl))).toBe(true);
      await guard.dispose();
    } finally {
      await context.close();
      await shared.close();
    }
  });

  // Its first navigation is issued before the popup has a frame (Playwright's `frame()` throws for
  // it): an uncaught throw there took the whole process down.
  it('sends a popup redirected there away, and lists the hop', async () => {
    const session = await openSession({ cdpUrl: remote.wsUrl, policy: policy(), url: `${siteUrl}/opener` });
    try {
      const popup = await eventually(() => session.context.pages().length > 1);
      expect(popup).toBe(true);
      const shown = () => session.context.pages().map((p) => p.url());
      expect(await eventually(() => shown().every((u) => !u.startsWith(insideUrl)))).toBe(true);
      expect(await eventually(() => session.guard!.blocked.some((b) => b.url === `${insideUrl}/admin`))).toBe(
        true,
      );
      // Still there for the next call.
      expect((await snapshot(session.page)).tree).toContain('Opener page');
    } finally {
      await session.close();
    }
  });

  it('(the probe is real: with the address allowed, the frame is read)', async () => {
    const session = await openSession({
      cdpUrl: remote.wsUrl,
      policy: policy(new URL(insideUrl).host),
      url: `${siteUrl}/framed`,
    });
    try {
      const child = () => session.page.frames().find((f) => f !== session.page.mainFrame());
      expect(await eventually(() => child()?.url() === `${insideUrl}/admin`)).toBe(true);
      await child()!.waitForLoadState('load');
      expect((await snapshot(session.page)).tree).toContain(BANNER);
    } finally {
      await session.close();
    }
  });
});

/** Pages whose own requests are redirected on to the service, and what they ask for there. */
const PROBES = [
  {
    what: "an image's, a fetch's and a worker's fetch's",
    path: () => '/subresources',
    asks: () => ['/from-fetch', '/from-image', '/from-worker'],
    inFrame: false,
    shows: 'Outer page',
  },
  {
    what: "a cross-site frame's own (a frame in a process of its own)",
    path: () => '/isolated',
    asks: () => ['/from-child-fetch', '/from-child-image'],
    inFrame: true,
    shows: 'Child page',
  },
  {
    // A scope per case: the browser keeps a registered worker from one session to the next.
    what: "a service worker's",
    path: (c: string) => `/sw-${c}/page`,
    asks: (c: string) => [`/from-sw-install-${c}`, `/from-sw-top-${c}`],
    inFrame: false,
    shows: 'Worker page',
  },
];

/** Opens the probe's page with the service refused or allowed; what reached it and what was refused. */
async function probe(p: (typeof PROBES)[number], allowed: boolean) {
  const c = allowed ? 'allowed' : 'refused';
  const before = insideHits.length;
  const session = await openSession({
    cdpUrl: remote.wsUrl,
    policy: allowed ? policy(new URL(insideUrl).host) : policy(),
    url: `${siteUrl}${p.path(c)}`,
  });
  try {
    const child = () => session.page.frames().find((f) => f !== session.page.mainFrame());
    if (p.inFrame) expect(await eventually(() => /isolated-child$/.test(child()?.url() ?? ''))).toBe(true);
    const where = p.inFrame ? child()! : session.page;
    // Each page sets its title once all its requests are answered, whichever way.
    await where.waitForFunction(() => document.title === 'finished', undefined, { timeout: 10_000 });
    await where.waitForLoadState('load');
    if (allowed) await eventually(() => insideHits.length - before >= p.asks(c).length);
    return {
      asks: p.asks(c),
      hits: insideHits.slice(before).sort(),
      refused: session.guard!.blocked.map((b) => b.url),
      tree: (await snapshot(session.page)).tree,
    };
  } finally {
    await session.close();
  }
}

describe.each(PROBES)('a remote browser: $what requests redirected to a refused address', (p) => {
  it('never reach it: each hop is stopped before it leaves, and named', async () => {
    const { asks, hits, refused, tree } = await probe(p, false);
    expect(hits).toEqual([]);
    expect(refused).toEqual(expect.arrayContaining(asks.map((path) => `${insideUrl}${path}`)));
    // The page, and the frame, are read as usual.
    expect(tree).toContain(p.shows);
  });

  it('(the probe is real: with the address allowed, they reach it)', async () => {
    const { asks, hits } = await probe(p, true);
    expect(hits).toEqual(asks);
  });
});
