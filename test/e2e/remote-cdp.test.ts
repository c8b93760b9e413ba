import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkBlockedError } from '../../lib/browser/guard.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { closeSharedBrowser, openSession } from '../../lib/browser/session.ts';
import { act } from '../../lib/ops/act.ts';
import { observe } from '../../lib/ops/observe.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { opContext } from '../support/ops-env.ts';
import { type RemoteChrome, startRemoteChrome } from '../support/remote-chrome.ts';

/** A browser we did not launch through Playwright, reachable only over CDP — like Browserbase or Steel. */
let chrome: RemoteChrome;
let cdpUrl: string;
let site: FixtureServer;

beforeAll(async () => {
  site = await startFixtureServer();
  chrome = await startRemoteChrome();
  cdpUrl = chrome.wsUrl;
});
afterAll(async () => {
  await chrome?.close();
  await site?.close();
});

const policy = () => ({ allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] });

describe('remote browser over CDP', () => {
  it('keeps page state across separate calls (as across Lambdas)', async () => {
    const first = await openSession({ cdpUrl, url: `${site.url}/login.html`, policy: policy() });
    try {
      const typed = await act(opContext(first), 'type "kept@state.example" into the email field');
      expect(typed.success).toBe(true);
    } finally {
      await first.close();
    }
    // A new connection, no URL: it picks up the same page where the last call left it.
    const second = await openSession({ cdpUrl, policy: policy() });
    try {
      expect(second.page.url()).toBe(`${site.url}/login.html`);
      const seen = await observe(opContext(second));
      expect(seen.elements.find((e) => e.name === 'Email')).toBeTruthy();
      expect(await second.page.locator('#email').inputValue()).toBe('kept@state.example');
      // New elements on a page another connection already numbered get fresh ids, never reused ones.
      await second.page.evaluate(
        `document.body.insertAdjacentHTML('beforeend', '<button>Added later</button>')`,
      );
      const snap = await snapshot(second.page);
      const ids = snap.elements.map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await second.close();
    }
  });

  it('guards the remote browser request by request', async () => {
    const err = await openSession({
      cdpUrl,
      url: `http://127.0.0.1:${site.crossOriginPort}/login.html`,
      policy: policy(),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkBlockedError);
    const s = await openSession({ cdpUrl, url: `${site.url}/iframes.html`, policy: policy() });
    try {
      // The cross-origin iframe's host is not allowed: the page loads, that frame does not.
      await s.page.waitForTimeout(200);
      expect(s.guard?.blocked.some((b) => b.url.includes(`:${site.crossOriginPort}/`))).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('BROWSERFN_CDP_URL: each job context on that browser works without our proxy, and is still guarded', async () => {
    const saved = process.env.BROWSERFN_CDP_URL;
    process.env.BROWSERFN_CDP_URL = cdpUrl;
    await closeSharedBrowser();
    try {
      const s = await openSession({ policy: policy() });
      try {
        // A browser on another machine cannot reach a proxy on this machine's loopback: with none
        // running at all, its pages still load.
        await closeGuardProxies();
        await s.page.goto(`${site.url}/login.html`);
        expect(await s.page.locator('h1').textContent()).toBe('Sign in to Acme');
        const refused = await s.page.goto(`http://127.0.0.1:${site.crossOriginPort}/login.html`).then(
          () => 'loaded',
          (e: Error) => e.message,
        );
        expect(refused).toMatch(/ERR_BLOCKED_BY_CLIENT|ERR_FAILED/);
        expect(s.guard?.blocked.some((b) => b.url.includes(`:${site.crossOriginPort}/`))).toBe(true);
      } finally {
        await s.close();
      }
    } finally {
      await closeSharedBrowser();
      if (saved === undefined) delete process.env.BROWSERFN_CDP_URL;
      else process.env.BROWSERFN_CDP_URL = saved;
    }
  });
});
