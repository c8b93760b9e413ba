/**
 * The edge worker (functions/edge.ts) bundled as a Workers build does and run in workerd through
 * miniflare, driving the suite's own Chromium over CDP on loopback (as it would Browserbase or
 * Steel): act / observe / extract on the fixture site through the worker's HTTP interface, with no
 * model and with the scripted one, the errors a caller branches on, and the guard refusing what
 * the operator did not allow — at the URL, and on the browser's Fetch domain (a redirect hop).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEdge, describeNodeImports } from '../../infra/edge/bundle.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { type RemoteChrome, startRemoteChrome } from '../support/remote-chrome.ts';

let chrome: RemoteChrome;
let site: FixtureServer;
let llm: ScriptedModel;
let mf: Miniflare;
let base: string;
/** A loopback port nothing listens on. */
let closedPort: number;

const KEY = 'edge-key';

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

beforeAll(async () => {
  [chrome, site, llm, closedPort] = await Promise.all([
    startRemoteChrome(),
    startFixtureServer(),
    startScriptedModel(),
    freePort(),
  ]);
  const bundle = await bundleEdge();
  if (bundle.nodeImports.length > 0)
    throw new Error(`the edge bundle imports Node:\n${describeNodeImports(bundle.nodeImports)}`);
  const worker = (name: string, extra: Record<string, string>, routes?: string[]) => ({
    name,
    ...(routes ? { routes } : {}),
    modules: [{ type: 'ESModule' as const, path: 'edge.mjs', contents: bundle.code }],
    compatibilityDate: '2025-09-01',
    kvNamespaces: ['BROWSERFN_CACHE'],
    bindings: {
      BROWSERFN_API_KEYS: `${KEY}:tenant-edge`,
      BROWSERFN_CDP_URL: chrome.wsUrl,
      // The operator opens the fixture site and a port nothing listens on (for the 502), nothing else.
      BROWSERFN_ALLOW_HOSTS: `127.0.0.1:${site.port},127.0.0.1:${closedPort}`,
      BROWSERFN_CDP_ALLOW_HOSTS: `127.0.0.1:${closedPort}`,
      ...extra,
    },
  });
  mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    workers: [
      // Callers may name this browser as their own session (cdpUrl) here, not on the other worker.
      worker('edge', { BROWSERFN_CDP_ALLOW_HOSTS: `127.0.0.1:${closedPort},127.0.0.1:${chrome.port}` }),
      // The same worker with a model (the scripted one, the operator's own URL) and a short deadline.
      worker(
        'edge-model',
        {
          BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
          OPENAI_API_KEY: 'sk-test',
          OPENAI_BASE_URL: llm.openaiBaseURL,
          BROWSERFN_REQUEST_TIMEOUT_MS: '4000',
        },
        ['edge-model.test/*'],
      ),
    ],
  });
  base = (await mf.ready).toString().replace(/\/$/, '');
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
  await chrome?.close();
  await site?.close();
  await llm?.close();
});

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
/** Through the worker's own HTTP server on loopback. */
const post = (path: string, body: unknown, h: Record<string, string> = headers) =>
  fetch(`${base}${path}`, { method: 'POST', headers: h, body: JSON.stringify(body) });
/** The worker with a model: the same server, routed by host name. */
const postModel = async (path: string, body: unknown) =>
  (await mf.dispatchFetch(`http://edge-model.test${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  })) as unknown as Response;

describe('edge worker in workerd', () => {
  it('acts on a page with no model: the button is clicked (the page tells the site), zero tokens', async () => {
    const res = await post('/v1/act', { url: `${site.url}/slow?ms=10&button`, instruction: 'click Buy now' });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ success: true, resolvedBy: 'matcher' });
    expect(body.usage.promptTokens + body.usage.completionTokens).toBe(0);
    // The browser sent the click's request before the act answered, but the site's server runs in this
    // process too and may read it after the answer: wait for it (round K: it had not been read yet).
    await expect.poll(() => site.hits, { timeout: 30_000 }).toContain('/bought');
  });

  it('observes and extracts with no model', async () => {
    const obs = await post('/v1/observe', {
      url: `${site.url}/login.html`,
      instruction: 'the Sign in button',
    });
    const observed = await obs.json();
    expect(obs.status, JSON.stringify(observed)).toBe(200);
    expect(observed.elements[0]).toMatchObject({ role: 'button', name: 'Sign in', method: 'click' });
    const ext = await post('/v1/extract', { url: `${site.url}/login.html` });
    const extracted = await ext.json();
    expect(ext.status, JSON.stringify(extracted)).toBe(200);
    expect(JSON.stringify(extracted.data)).toContain('Sign in to Acme');
    expect([observed.status, extracted.status]).toEqual([200, 200]);
  });

  it('reports the page’s HTTP status as the Node server does: a 404 page is read and says 404', async () => {
    const res = await post('/v1/extract', { url: `${site.url}/no-such-page.html` });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.status).toBe(404);
    expect(JSON.stringify(body.data)).toContain('Not found');
  });

  it('an act that cannot go on, on a 404 page, says the page is not there (as the Node server says)', async () => {
    const res = await post('/v1/act', {
      url: `${site.url}/no-such-page.html`,
      instruction: 'click the login button',
    });
    const body = (await res.json()) as { error: { kind: string; message: string } };
    expect(res.status, JSON.stringify(body)).toBe(502);
    expect(body.error.kind).toBe('navigation');
    expect(body.error.message).toContain('the page answered HTTP 404 (not found)');
    expect(JSON.stringify(body)).not.toContain('could not resolve');
  });

  it('acts, observes and extracts with the model; a secret never reaches it; the KV cache answers the repeat', async () => {
    llm.setHandler((r) => ({
      json: {
        elementId: idInPrompt(r.text, 'textbox', 'Email'),
        method: 'fill',
        arguments: ['%email%'],
        twoStep: false,
        reason: 'the address field',
      },
    }));
    const before = llm.requests.length;
    const act = () =>
      postModel('/v1/act', {
        url: `${site.url}/login.html`,
        instruction: 'put %email% where the address goes',
        variables: { email: 'grace@navy.example' },
      });
    const first = await act();
    const acted = await first.json();
    expect(first.status, JSON.stringify(acted)).toBe(200);
    expect(acted).toMatchObject({ success: true, resolvedBy: 'llm' });
    expect(acted.usage.promptTokens).toBeGreaterThan(0);
    expect(llm.requests.length).toBe(before + 1);
    expect(JSON.stringify(acted)).not.toContain('grace@navy.example');
    expect(JSON.stringify(llm.requests)).not.toContain('grace@navy.example');
    const again = await (await act()).json();
    expect(again).toMatchObject({ success: true, resolvedBy: 'cache' });
    expect(llm.requests.length).toBe(before + 1);

    llm.setHandler(() => ({ json: { data: { heading: 'Sign in to Acme' }, done: true } }));
    const ext = await postModel('/v1/extract', {
      url: `${site.url}/login.html`,
      instruction: 'the page heading',
      schema: { type: 'object', properties: { heading: { type: 'string' } }, required: ['heading'] },
    });
    const extracted = await ext.json();
    expect(ext.status, JSON.stringify(extracted)).toBe(200);
    expect(extracted).toMatchObject({ data: { heading: 'Sign in to Acme' }, resolvedBy: 'llm' });
    llm.setHandler(undefined);
  });

  it('answers 401 without a key and 400 naming the field', async () => {
    const noKey = await post(
      '/v1/act',
      { url: `${site.url}/login.html`, instruction: 'click Sign in' },
      {
        'content-type': 'application/json',
      },
    );
    expect(noKey.status).toBe(401);
    expect((await noKey.json()).error.kind).toBe('unauthorized');
    const bad = await post('/v1/observe', { url: 'ftp://example.com/' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/^url: /);
  });

  it('refuses a loopback page the operator did not allow (403), before the browser asks for it', async () => {
    const res = await post('/v1/observe', { url: `${site.crossOriginUrl}/login.html?probe=direct` });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(403);
    expect(body.error).toMatchObject({ kind: 'blocked' });
    expect(body.error.message).toMatch(/loopback/);
    expect(site.hits).not.toContain('/login.html?probe=direct');
  });

  it('refuses a redirect hop to such a page on the browser’s Fetch domain (403), the page never loads', async () => {
    const target = `${site.crossOriginUrl}/login.html?probe=redirect`;
    const res = await post('/v1/observe', { url: `${site.url}/redirect?to=${encodeURIComponent(target)}` });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(403);
    expect(body.error.url).toBe(target);
    expect(site.hits).not.toContain('/login.html?probe=redirect');
  });

  it('answers 502 for a page or a browser that cannot be reached', async () => {
    const page = await post('/v1/observe', { url: `http://127.0.0.1:${closedPort}/` });
    const pageBody = await page.json();
    expect(page.status, JSON.stringify(pageBody)).toBe(502);
    expect(pageBody.error.kind).toBe('unreachable');
    const browser = await post('/v1/observe', {
      cdpUrl: `ws://127.0.0.1:${closedPort}/devtools/browser/x`,
      instruction: 'the Sign in button',
    });
    const browserBody = await browser.json();
    expect(browser.status, JSON.stringify(browserBody)).toBe(502);
    expect(browserBody.error.message).toMatch(/could not connect to the browser at ws:\/\/127\.0\.0\.1:\d+/);
    // A browser endpoint the operator did not list: refused before any connection.
    const unlisted = await postModel('/v1/observe', { cdpUrl: chrome.wsUrl });
    expect(unlisted.status).toBe(403);
  });

  it('keeps a caller’s own browser session across calls (cdpUrl): what one call typed, the next ones see', async () => {
    const typed = await post('/v1/act', {
      cdpUrl: chrome.wsUrl,
      url: `${site.url}/login.html`,
      instruction: 'type "ada@example.com" into the Email field',
    });
    expect(typed.status, JSON.stringify(await typed.clone().json())).toBe(200);
    const clicked = await post('/v1/act', { cdpUrl: chrome.wsUrl, instruction: 'click the Sign in button' });
    const click = await clicked.json();
    expect(clicked.status, JSON.stringify(click)).toBe(200);
    expect(click.success).toBe(true);
    const read = await post('/v1/extract', { cdpUrl: chrome.wsUrl });
    const body = await read.json();
    expect(read.status, JSON.stringify(body)).toBe(200);
    expect(JSON.stringify(body.data)).toContain('Signed in as ada@example.com');
  });

  it('answers 504 saying what it waited for when the deadline passes', async () => {
    const res = await postModel('/v1/observe', { url: `${site.url}/slow?ms=15000` });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(504);
    expect(body.error.message).toMatch(/waiting for the page .*slow.* to load/);
  });

  it('describes the three routes in /openapi.json', async () => {
    const doc = await (await fetch(`${base}/openapi.json`)).json();
    expect(Object.keys(doc.paths).sort()).toEqual(['/v1/act', '/v1/extract', '/v1/observe']);
    expect(Object.keys(doc.paths['/v1/act'].post.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '502', '504']),
    );
  });
});
