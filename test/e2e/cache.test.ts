import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { act } from '../../lib/ops/act.ts';
import { ActionCache } from '../../lib/ops/cache.ts';
import { LocalCacheStore } from '../../lib/store/local-cache.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { fixtureSession, opContext } from '../support/ops-env.ts';

let browser: Browser;
let site: FixtureServer;
let dir: string;

beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
  dir = await mkdtemp(join(tmpdir(), 'bfn-cache-'));
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await rm(dir, { recursive: true, force: true });
});

async function allCacheText(): Promise<string> {
  const files = await readdir(dir, { recursive: true });
  const texts = await Promise.all(
    files.filter((f) => f.endsWith('.json')).map((f) => readFile(join(dir, f), 'utf8')),
  );
  return texts.join('\n');
}

describe('action cache', () => {
  it('misses, then hits with zero tokens on the same kind of page', async () => {
    const cache = new ActionCache(new LocalCacheStore(join(dir, 'a')));
    const s1 = await fixtureSession(browser, site, '/login.html');
    const first = await act(opContext(s1, { cache }), 'click the Sign in button');
    await s1.close();
    expect(first.cache).toBe('miss');
    expect(first.resolvedBy).toBe('matcher');
    const s2 = await fixtureSession(browser, site, '/login.html');
    try {
      const second = await act(opContext(s2, { cache }), 'Click the "Sign in" button.');
      expect(second.cache).toBe('hit');
      expect(second.resolvedBy).toBe('cache');
      expect(second.success).toBe(true);
      expect(second.usage.promptTokens).toBe(0);
      expect(await s2.page.locator('#status').textContent()).toBe('Signed in as ');
    } finally {
      await s2.close();
    }
  });

  it('heals when the markup changed under the same URL, and rewrites the entry', async () => {
    const cache = new ActionCache(new LocalCacheStore(join(dir, 'b')));
    const s1 = await fixtureSession(browser, site, '/login.html');
    await act(opContext(s1, { cache }), 'check remember me');
    await s1.close();
    const before = await allCacheText();
    // Same URL, new markup: serve login-v2's HTML for /login.html.
    const v2 = await (await fetch(`${site.url}/login-v2.html`)).text();
    const s2 = await fixtureSession(browser, site, '/welcome.html');
    try {
      await s2.page.route('**/login.html', (route) => route.fulfill({ contentType: 'text/html', body: v2 }));
      await s2.page.goto(`${site.url}/login.html`);
      const healed = await act(opContext(s2, { cache }), 'check remember me');
      expect(healed.success).toBe(true);
      expect(healed.cache).toBe('healed');
      expect(await s2.page.locator('input[type=checkbox]').isChecked()).toBe(true);
      expect(await allCacheText()).not.toBe(before);
      const again = await act(opContext(s2, { cache }), 'uncheck remember me');
      expect(again.success).toBe(true);
    } finally {
      await s2.close();
    }
  });

  it('never writes a variable value, only its name', async () => {
    const cache = new ActionCache(new LocalCacheStore(join(dir, 'c')));
    const secret = 'correct-horse-battery-staple';
    for (let i = 0; i < 2; i++) {
      const s = await fixtureSession(browser, site, '/login.html');
      try {
        const res = await act(
          opContext(s, { cache, variables: { pw: secret } }),
          'type %pw% into the password field',
        );
        expect(res.success).toBe(true);
        expect(res.cache).toBe(i === 0 ? 'miss' : 'hit');
        expect(await s.page.locator('#password').inputValue()).toBe(secret);
        expect(JSON.stringify(res)).not.toContain(secret);
      } finally {
        await s.close();
      }
    }
    const text = await allCacheText();
    expect(text).toContain('%pw%');
    expect(text).not.toContain(secret);
  });

  it('falls through to the other tiers when the cached element is gone', async () => {
    const cache = new ActionCache(new LocalCacheStore(join(dir, 'd')));
    const s1 = await fixtureSession(browser, site, '/rerender.html');
    await act(opContext(s1, { cache }), 'click Save draft');
    await s1.close();
    const s2 = await fixtureSession(browser, site, '/rerender.html');
    try {
      // The toolbar moved and a second "Save draft" appeared: the cached element cannot be told apart
      // any more, so it must not be replayed; the matcher sees two equal buttons and defers too.
      await s2.page.evaluate('window.rerender()');
      await s2.page.evaluate(`document.body.insertAdjacentHTML('afterbegin', '<button>Save draft</button>')`);
      const res = await act(opContext(s2, { cache }), 'click Save draft').catch((e) => e);
      expect(res.kind ?? res.cache).toBe('no_model');
    } finally {
      await s2.close();
    }
  });
});
