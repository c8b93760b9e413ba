import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppDeps, createApp } from '../../lib/api/app.ts';
import { localTenantCaches } from '../../lib/api/tenant-caches.ts';
import { callRateFromEnv } from '../../lib/api/tenant-gate.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { serveOnLoopback } from '../support/serve.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;
let base: string;
let server: ServerType;
let cacheRoot: string;
/** A second model endpoint, as a caller-named `model.baseURL` would be (allowed by the guard here). */
let elsewhere: ScriptedModel;

beforeAll(async () => {
  [browser, site, llm, elsewhere] = await Promise.all([
    startBrowser(),
    startFixtureServer(),
    startScriptedModel(),
    startScriptedModel(),
  ]);
  cacheRoot = await mkdtemp(join(tmpdir(), 'bfn-api-cache-'));
  const app = createApp({
    keys: new Map([
      ['key-a', 'tenant-a'],
      ['key-b', 'tenant-b'],
    ]),
    policy: {
      allowPrivate: false,
      allowHosts: [`127.0.0.1:${site.port}`, `127.0.0.1:${new URL(elsewhere.url).port}`],
    },
    browser: async () => browser,
    env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: llm.openaiBaseURL },
    maxBodyBytes: 64 * 1024,
    cacheFor: localTenantCaches(cacheRoot),
  });
  ({ server, base } = await serveOnLoopback(app.fetch));
});
afterAll(async () => {
  server?.close();
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await elsewhere?.close();
  await rm(cacheRoot, { recursive: true, force: true });
});

/** An app of its own, for a test of limits or deadlines: keys k, k1, k2 (tenants t, t1, t2). */
const appWith = (extra: Partial<AppDeps>) =>
  createApp({
    keys: new Map([
      ['k', 't'],
      ['k1', 't1'],
      ['k2', 't2'],
    ]),
    policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
    browser: async () => browser,
    env: {},
    ...extra,
  });

/** A JSON POST to such an app with a key (a string body is sent as it is). */
const postTo = (app: ReturnType<typeof createApp>, path: string, key: string, body: unknown) =>
  app.request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const post = (path: string, body: unknown, key: string | null = 'key-a') =>
  fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('HTTP API over real HTTP', () => {
  it('answers 401 without a key or with an unknown one', async () => {
    for (const key of [null, 'nope']) {
      const res = await post('/v1/act', { url: `${site.url}/login.html`, instruction: 'click Sign in' }, key);
      expect(res.status).toBe(401);
      expect((await res.json()).error.kind).toBe('unauthorized');
    }
  });

  it('answers 400 naming the failing field', async () => {
    const cases: [unknown, string][] = [
      [{ instruction: 'click' }, 'url'],
      [{ url: 'ftp://x', instruction: 'click' }, 'url'],
      [{ url: `${site.url}/login.html`, instruction: 'x', options: { budget: 'lots' } }, 'options.budget'],
      [{ url: `${site.url}/login.html`, instruction: 'x', variables: { 'bad name': 'v' } }, 'variables'],
      [{ url: `${site.url}/login.html`, instruction: 'x', unknownField: 1 }, '(body)'],
      [{ url: `${site.url}/login.html` }, 'instruction'],
      [{ url: `${site.url}/login.html`, action: { method: 'click', target: { id: 3 } } }, 'action.target.id'],
    ];
    for (const [body, path] of cases) {
      const res = await post('/v1/act', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const json = await res.json();
      expect(json.error.kind).toBe('invalid');
      expect(json.error.issues.map((i: { path: string }) => i.path).join(' ')).toContain(path);
    }
    const broken = await post('/v1/observe', '{"url": ');
    expect(broken.status).toBe(400);
    expect((await broken.json()).error.kind).toBe('invalid');
  });

  it('refuses bodies over the size limit and URLs the guard blocks', async () => {
    const big = await post('/v1/act', { url: `${site.url}/login.html`, instruction: 'x'.repeat(70_000) });
    expect(big.status).toBe(413);
    // A body sent in chunks declares no length: it is counted as it arrives, then read as usual.
    const chunked = (text: string) =>
      fetch(`${base}/v1/observe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
        body: new Blob([text]).stream(),
        duplex: 'half',
      } as RequestInit);
    const bigChunked = await chunked(
      JSON.stringify({ url: `${site.url}/login.html`, instruction: 'x'.repeat(70_000) }),
    );
    expect(bigChunked.status).toBe(413);
    expect((await bigChunked.json()).error.message).toContain('body larger than');
    const smallChunked = await chunked(
      JSON.stringify({ url: `${site.url}/login.html`, instruction: 'the Sign in button' }),
    );
    expect(smallChunked.status).toBe(200);
    expect((await smallChunked.json()).elements[0].name).toBe('Sign in');
    const blocked = await post('/v1/observe', { url: 'http://169.254.169.254/latest/meta-data/' });
    expect(blocked.status).toBe(403);
    const json = await blocked.json();
    expect(json.error.kind).toBe('blocked');
    expect(json.error.message).toContain('169.254.169.254');
  });

  it('acts with zero tokens on a plain instruction (200)', async () => {
    const res = await post('/v1/act', {
      url: `${site.url}/login.html`,
      instruction: 'click the Sign in button',
    });
    expect(res.status).toBe(200);
    const json = await res.json();
    expect(json.success).toBe(true);
    expect(json.resolvedBy).toMatch(/matcher|cache/);
    expect(json.usage.promptTokens).toBe(0);
  });

  it('acts through the model with a secret variable that never comes back', async () => {
    llm.setHandler((r) => ({
      json: {
        elementId: idInPrompt(r.text, 'textbox', 'Email'),
        method: 'fill',
        arguments: ['%email%'],
        twoStep: false,
        reason: 'x',
      },
    }));
    const res = await post('/v1/act', {
      url: `${site.url}/login.html`,
      instruction: 'put %email% where the address goes',
      variables: { email: 'grace@navy.example' },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text).success).toBe(true);
    expect(JSON.parse(text).usage.promptTokens).toBeGreaterThan(0);
    expect(text).not.toContain('grace@navy.example');
    expect(JSON.stringify(llm.requests)).not.toContain('grace@navy.example');
  });

  it('observes and extracts', async () => {
    const obs = await post('/v1/observe', { url: `${site.url}/login.html` });
    expect(obs.status).toBe(200);
    expect((await obs.json()).elements.length).toBeGreaterThan(4);
    llm.setHandler(() => ({ json: { data: { heading: 'Sign in to Acme' }, done: true } }));
    const ext = await post('/v1/extract', {
      url: `${site.url}/login.html`,
      instruction: 'the page heading',
      schema: { type: 'object', properties: { heading: { type: 'string' } }, required: ['heading'] },
    });
    expect(ext.status).toBe(200);
    expect((await ext.json()).data).toEqual({ heading: 'Sign in to Acme' });
  });

  it('says which field is wrong when the model choice cannot work', async () => {
    const res = await post('/v1/act', {
      url: `${site.url}/login.html`,
      instruction: 'log me in',
      model: 'openai-compatible/none',
    });
    // openai-compatible without a base URL is a configuration error on the request: 400 naming model.
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/^model: /);
  });

  it('holds each key to its share of calls at once: the next one is a 429 naming the limit, other keys go on', async () => {
    const sharedApp = appWith({ maxCallsPerTenant: 1 });
    const observe = (key: string, url: string) =>
      postTo(sharedApp, '/v1/observe', key, { url, instruction: 'the Sign in button' });
    const slow = observe('k1', `${site.url}/slow?ms=1500`);
    await new Promise((r) => setTimeout(r, 200));
    const refused = await observe('k1', `${site.url}/login.html`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const body = await refused.json();
    expect(body.error).toMatchObject({ kind: 'limit', retryable: true });
    expect(body.error.message).toContain('already has 1 call in progress');
    // Another key is not held back by the first one's calls.
    expect((await observe('k2', `${site.url}/login.html`)).status).toBe(200);
    await slow;
    // The slot is given back when a call answers, and when it fails.
    const bad = await postTo(sharedApp, '/v1/observe', 'k1', '{"url": 5}');
    expect(bad.status).toBe(400);
    const again = await observe('k1', `${site.url}/login.html`);
    expect(again.status).toBe(200);
    expect((await again.json()).elements[0].name).toBe('Sign in');
  });

  it('holds each key to its calls per second, counted in the shared store: a 429 with Retry-After, other keys go on', async () => {
    const root = await mkdtemp(join(tmpdir(), 'bfn-api-rate-'));
    try {
      const store = new LocalRunStore(root);
      // The bucket runs on a clock the test moves: how long an observe takes on a busy machine must
      // not refill it between the two calls (it did: 200 where 429 was due).
      let clock = Date.now();
      const buckets: Pick<typeof store, 'takeToken'> = {
        takeToken: (key, limit) => store.takeToken(key, limit, clock),
      };
      // One call every two seconds, no burst beyond one.
      const rated = appWith({ callRate: callRateFromEnv('0.5', buckets) });
      const observe = (key: string) =>
        postTo(rated, '/v1/observe', key, {
          url: `${site.url}/login.html`,
          instruction: 'the Sign in button',
        });
      expect((await observe('k1')).status).toBe(200);
      const second = await observe('k1');
      expect(second.status).toBe(429);
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(second.headers.get('retry-after'))).toBeLessThanOrEqual(2);
      const body = await second.json();
      expect(body.error).toMatchObject({ kind: 'limit', retryable: true });
      expect(body.error.message).toContain('BROWSERFN_CALLS_PER_SECOND_PER_KEY');
      expect((await observe('k2')).status).toBe(200);
      clock += 2100;
      expect((await observe('k1')).status).toBe(200);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('answers 504 when a request outlives its deadline, and frees the page', async () => {
    const slowApp = appWith({ requestTimeoutMs: 400 });
    const started = Date.now();
    const res = await postTo(slowApp, '/v1/observe', 'k', { url: `${site.url}/slow?ms=6000` });
    expect(res.status).toBe(504);
    expect((await res.json()).error.kind).toBe('timeout');
    // Answered before the page could have loaded at all (it takes 6 s): the deadline, not the page,
    // ended the call. A busy machine adds delay to the 400 ms, never 5.6 s of it.
    expect(Date.now() - started).toBeLessThan(6000);
  });

  it('does nothing on a page that opens after the 504, and keeps the key busy until that page is closed', async () => {
    const slowApp = appWith({ requestTimeoutMs: 400, maxCallsPerTenant: 1 });
    const call = (path: string, url: string, instruction: string) =>
      postTo(slowApp, path, 'k', { url, instruction });
    const late = await call('/v1/act', `${site.url}/slow?ms=1200&button`, 'click the Buy now button');
    expect(late.status).toBe(504);
    // Its page is still loading: the key's one call is still in use.
    expect((await call('/v1/observe', `${site.url}/login.html`, 'the Sign in button')).status).toBe(429);
    // The slot comes back when that page has loaded and been closed: how long that takes is the
    // machine's business (seconds under load), so the key is asked again until it is free.
    let after = await call('/v1/observe', `${site.url}/login.html`, 'the Sign in button');
    for (let tries = 0; after.status === 429 && tries < 300; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await call('/v1/observe', `${site.url}/login.html`, 'the Sign in button');
    }
    // Let in: answered (200), or out of this app's 400 ms deadline on a busy machine (504) — either
    // way the call got the key's slot, which is what is checked here.
    expect([200, 504]).toContain(after.status);
    // The page opened after the answer and is closed now: the click the caller was told had timed
    // out never happened.
    expect(site.hits.filter((h) => h.startsWith('/slow?ms=1200'))).toHaveLength(1);
    expect(site.hits).not.toContain('/bought');
  });

  it("keeps each tenant's action cache to itself", async () => {
    const body = { url: `${site.url}/login.html`, instruction: 'tick the remember me checkbox' };
    const first = await (await post('/v1/act', body, 'key-a')).json();
    const again = await (await post('/v1/act', body, 'key-a')).json();
    const other = await (await post('/v1/act', body, 'key-b')).json();
    expect([first.cache, again.cache, other.cache]).toEqual(['miss', 'hit', 'miss']);
  });

  it('guards a caller-chosen model URL like a page URL', async () => {
    const res = await post('/v1/act', {
      url: `${site.url}/login.html`,
      instruction: 'log me in',
      model: { name: 'openai-compatible/llama', baseURL: 'http://169.254.169.254/v1' },
    });
    expect(res.status).toBe(403);
    expect((await res.json()).error.message).toMatch(/^model\.baseURL: .*169\.254\.169\.254/);
  });

  it('never hands the server’s model key to a model URL the caller names', async () => {
    elsewhere.setHandler((r) => ({
      json: {
        elementId: idInPrompt(r.text, 'button', 'Sign in'),
        method: 'click',
        arguments: [],
        twoStep: false,
        reason: 'it',
      },
    }));
    const res = await post('/v1/act', {
      url: `${site.url}/login.html`,
      instruction: 'log me in',
      model: { name: 'openai/gpt-4.1-mini', baseURL: elsewhere.openaiBaseURL },
    });
    expect(res.status).toBe(200);
    expect((await res.json()).resolvedBy).toBe('llm');
    expect(elsewhere.requests).toHaveLength(1);
    expect(elsewhere.requests[0]!.headers.authorization).not.toContain('sk-test');
  });

  it('serves /healthz and an OpenAPI document generated from the same schemas', async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ ok: true });
    const doc = await (await fetch(`${base}/openapi.json`)).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/act', '/v1/observe', '/v1/extract']));
    expect(doc.components.schemas.ActRequest.properties.instruction).toBeTruthy();
  });
});
