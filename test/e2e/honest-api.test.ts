import type { ServerType } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppDeps, createApp } from '../../lib/api/app.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { serveOnLoopback } from '../support/serve.ts';
import { startTrapSites, type TrapSites } from '../support/trap-site.ts';

/** Failures are reported as failures: the API over real HTTP, real Chromium, loopback sites only. */

let trap: TrapSites;
let site: FixtureServer;
let llm: ScriptedModel;
let current: Promise<Browser> | undefined;
const servers: ServerType[] = [];

/** The app's browser, relaunched when it died (as the shared browser of `npm start` is). */
const browser = async () => {
  const b = current ? await current : undefined;
  if (!b?.isConnected()) current = launchBrowser();
  return current!;
};

async function listen(deps: Partial<AppDeps> = {}): Promise<string> {
  const app = createApp({
    keys: new Map([['key', 'tenant']]),
    policy: {
      allowPrivate: false,
      allowHosts: [`127.0.0.1:${trap.port}`, `127.0.0.1:${trap.closedPort}`, `127.0.0.1:${site.port}`],
    },
    browser,
    env: {},
    ...deps,
  });
  const { server, base } = await serveOnLoopback(app.fetch);
  servers.push(server);
  return base;
}

let base: string;
beforeAll(async () => {
  [trap, site, llm] = await Promise.all([startTrapSites(), startFixtureServer(), startScriptedModel()]);
  await browser();
  base = await listen();
});
afterAll(async () => {
  for (const s of servers) s.close();
  await closeGuardProxies();
  await (await current)?.close();
  await trap?.close();
  await site?.close();
  await llm?.close();
});

const call = (path: string, body: unknown, at = base, init: RequestInit = {}) =>
  fetch(at + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer key' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });

describe('a navigation the guard refuses after the page loaded', () => {
  it('is a 403 naming the URL and the rule (meta refresh, Refresh header, script), never the block page', async () => {
    for (const [path, target] of [
      ['/meta-refresh', '/meta'],
      ['/refresh-header', '/header'],
      ['/js-location', '/js'],
    ] as const) {
      for (const op of ['observe', 'extract'] as const) {
        const res = await call(`/v1/${op}`, { url: `${trap.origin}${path}` });
        const json = await res.json();
        expect(res.status, `${op} ${path}: ${JSON.stringify(json)}`).toBe(403);
        expect(json.error.kind).toBe('blocked');
        expect(json.error.url).toBe(`${trap.secretOrigin}${target}`);
        expect(json.error.message).toContain(`${trap.secretOrigin}${target}`);
        expect(json.error.message).toMatch(/loopback/);
      }
    }
    expect(trap.secretHits).toEqual([]);
  });

  it('inside act (a link, a form, a script on click, a goto) is success:false, kind blocked, with the URL', async () => {
    const cases: [unknown, string][] = [
      ['click the Secret report link', '/link'],
      ['click the Send button', '/form'],
      ['click the Go away button', '/button'],
      [{ method: 'goto', args: [`${trap.secretOrigin}/goto`] }, '/goto'],
    ];
    for (const [what, target] of cases) {
      const body = typeof what === 'string' ? { instruction: what } : { action: what };
      const res = await call('/v1/act', { url: `${trap.origin}/links`, ...body });
      const json = await res.json();
      const label = `${JSON.stringify(what)} ${JSON.stringify(json)}`;
      expect(res.status, label).toBe(200);
      expect(json.success, label).toBe(false);
      expect(json.error.kind, label).toBe('blocked');
      expect(json.error.url, label).toBe(`${trap.secretOrigin}${target}`);
      expect(json.error.message).toMatch(/loopback/);
    }
    expect(trap.secretHits).toEqual([]);
    // The same page, an allowed link: success as before.
    const fine = await (
      await call('/v1/act', { url: `${trap.origin}/links`, instruction: 'click the Fine page link' })
    ).json();
    expect(fine.success).toBe(true);
    expect(fine.url).toBe(`${trap.origin}/fine`);
    // A link to a page that does not answer: not blocked, but not a success either.
    const gone = await (
      await call('/v1/act', { url: `${trap.origin}/links`, instruction: 'click the Gone page link' })
    ).json();
    expect(gone.success).toBe(false);
    expect(gone.error).toMatchObject({
      kind: 'unreachable',
      url: `http://127.0.0.1:${trap.closedPort}/gone`,
    });
  });

  it('never lets a page reach file: (a script, a redirect), nor a caller name one', async () => {
    const viaScript = await call('/v1/observe', { url: `${trap.origin}/to-file` });
    const seen = await viaScript.json();
    // The browser refuses a web page's way to file: itself: the page stays where it was.
    expect(viaScript.status).toBe(200);
    expect(seen.url).toBe(`${trap.origin}/to-file`);
    expect(seen.elements.map((e: { name: string }) => e.name)).toEqual(['Local file']);
    const clicked = await (
      await call('/v1/act', { url: `${trap.origin}/to-file`, instruction: 'click the Local file link' })
    ).json();
    expect(clicked.url).toBe(`${trap.origin}/to-file`);
    const viaRedirect = await call('/v1/observe', { url: `${trap.origin}/redirect-file` });
    expect(viaRedirect.status).toBe(403);
    expect((await viaRedirect.json()).error.message).toMatch(/redirect .*local file/);
    const typed = await call('/v1/observe', { url: 'file:///etc/hostname' });
    expect(typed.status).toBe(400);
    expect((await typed.json()).error.issues[0].path).toBe('url');
  });
});

describe('a page that cannot be reached', () => {
  it('is a 502 unreachable naming the URL: closed port, DNS failure, TLS failure', async () => {
    const cases: [string, RegExp][] = [
      [`http://127.0.0.1:${trap.closedPort}/`, /ECONNREFUSED|nothing answered/],
      ['http://nowhere.invalid/', /DNS/],
      [`https://127.0.0.1:${trap.port}/`, /TLS/],
    ];
    for (const [url, why] of cases) {
      const res = await call('/v1/observe', { url });
      const json = await res.json();
      expect(res.status, `${url}: ${JSON.stringify(json)}`).toBe(502);
      expect(json.error.kind).toBe('unreachable');
      expect(json.error.message).toContain(url);
      expect(json.error.message).toMatch(why);
    }
  });

  it('an HTTP error page loads, and the result carries its status', async () => {
    const missing = await call('/v1/observe', { url: `${trap.origin}/missing` });
    expect(missing.status).toBe(200);
    const m = await missing.json();
    expect(m.status).toBe(404);
    expect(m.elements.map((e: { name: string }) => e.name)).toContain('Home');
    const broken = await (await call('/v1/extract', { url: `${trap.origin}/broken` })).json();
    expect(broken.status).toBe(500);
    expect(broken.data.pageText).toContain('Server trouble');
    const ok = await (await call('/v1/observe', { url: `${trap.origin}/fine` })).json();
    expect(ok.status).toBe(200);
  });
});

describe('a browser that dies mid-request', () => {
  const crashWhen = async (path: string, seen: string) => {
    const before = trap.hits.length;
    const pending = call('/v1/observe', { url: `${trap.origin}${path}` });
    while (!trap.hits.slice(before).includes(seen)) await new Promise((r) => setTimeout(r, 10));
    const b = await browser();
    const cdp = await b.newBrowserCDPSession();
    await cdp.send('Browser.crash' as never).catch(() => undefined);
    return pending;
  };

  it('answers 503 browser_crashed (retryable) wherever it died, and the next call relaunches', async () => {
    for (const [path, seen] of [
      ['/slow?ms=1500', '/slow'],
      ['/slow-image?ms=1500', '/slow'],
    ] as const) {
      const res = await crashWhen(path, seen);
      const json = await res.json();
      expect(res.status, `${path}: ${JSON.stringify(json)}`).toBe(503);
      expect(json.error.kind).toBe('browser_crashed');
      expect(json.error.retryable).toBe(true);
      const next = await call('/v1/observe', { url: `${trap.origin}/fine` });
      expect(next.status).toBe(200);
    }
  });
});

describe('observe without a model', () => {
  it('answers what the zero-token tier can, and 422 no_model otherwise (never a silent [])', async () => {
    const button = await (
      await call('/v1/observe', { url: `${site.url}/login.html`, instruction: 'the Sign in button' })
    ).json();
    expect(button.elements.map((e: { name: string }) => e.name)).toEqual(['Sign in']);
    expect(button.resolvedBy).toBe('matcher');
    const fields = await (
      await call('/v1/observe', { url: `${site.url}/login.html`, instruction: 'the sign-in form fields' })
    ).json();
    expect(fields.elements.map((e: { name: string; method: string }) => `${e.method} ${e.name}`)).toEqual([
      'fill Email',
      'fill Password',
      'check Remember me',
    ]);
    const vague = await call('/v1/observe', {
      url: `${site.url}/login.html`,
      instruction: 'whatever looks most suspicious',
    });
    expect(vague.status).toBe(422);
    const json = await vague.json();
    expect(json.error.kind).toBe('no_model');
    expect(json.error.message).toMatch(/BROWSERFN_MODEL/);
  });
});

describe('unknown %variables%', () => {
  it('is a 400 naming the variable, and nothing was typed', async () => {
    const before = site.hits.length;
    const res = await call('/v1/act', {
      url: `${site.url}/login.html`,
      instruction: 'type %pasword% into the Password field',
      variables: { password: 'hunter2' },
    });
    expect(res.status).toBe(400);
    const json = await res.json();
    expect(json.error.kind).toBe('invalid');
    expect(json.error.message).toMatch(/%pasword%/);
    expect(json.error.message).not.toContain('hunter2');
    const none = await call('/v1/act', {
      url: `${site.url}/login.html`,
      action: { method: 'fill', target: { locator: '//input[@id="email"]' }, args: ['%email%'] },
    });
    expect(none.status).toBe(400);
    expect((await none.json()).error.message).toMatch(/%email%/);
    // Refused before the page was even opened.
    expect(site.hits.slice(before)).not.toContain('/login.html');
  });
});

describe('the request deadline', () => {
  it('stops the model retries and names what was slow', async () => {
    // Every model call fails slowly with a retryable 500: without the abort, retries go on.
    llm.setHandler(() => ({ delayMs: 300, reply: { status: 500 } }));
    const at = await listen({
      env: {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: llm.openaiBaseURL,
        BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
        BROWSERFN_MODEL_MAX_RETRIES: '10',
      },
      requestTimeoutMs: 2000,
    });
    const res = await call(
      '/v1/act',
      { url: `${site.url}/login.html`, instruction: 'log me in somehow' },
      at,
    );
    const sentBy504 = llm.requests.length;
    expect(res.status).toBe(504);
    expect(sentBy504).toBeGreaterThan(0);
    // Long enough for retries the client would otherwise still be sending (backoff ≤ 4 s by then).
    await new Promise((r) => setTimeout(r, 4000));
    expect(llm.requests.length).toBe(sentBy504);
    const json = await res.json();
    expect(json.error.kind).toBe('timeout');
    expect(json.error.message).toMatch(/the model openai\/gpt-4\.1-mini/);
    llm.setHandler(undefined);
  });

  it('names the page when the page was what was slow', async () => {
    const at = await listen({ requestTimeoutMs: 600 });
    const res = await call('/v1/observe', { url: `${trap.origin}/slow?ms=3000` }, at);
    expect(res.status).toBe(504);
    expect((await res.json()).error.message).toContain(`the page ${trap.origin}/slow?ms=3000`);
  });
});

describe('HTTP edges', () => {
  it('wrong method → 405 with JSON and an Allow header; every 4xx has a JSON error body', async () => {
    for (const [method, path, allow] of [
      ['GET', '/v1/act', 'POST'],
      ['PUT', '/v1/observe', 'POST'],
      ['DELETE', '/v1/extract', 'POST'],
      ['POST', '/healthz', 'GET'],
      ['POST', '/openapi.json', 'GET'],
    ] as const) {
      const res = await fetch(base + path, { method, headers: { authorization: 'Bearer key' } });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toContain(allow);
      expect((await res.json()).error.kind).toBe('method_not_allowed');
    }
    const small = await listen({ maxBodyBytes: 1024 });
    const cases: [Promise<Response>, number][] = [
      [fetch(`${base}/nope`), 404],
      [fetch(`${base}/v1/nope`, { method: 'POST', headers: { authorization: 'Bearer key' } }), 404],
      [call('/v1/act', '{"url": '), 400],
      [call('/v1/act', 'null'), 400],
      [call('/v1/act', '[]'), 400],
      [
        call('/v1/act', '{}', base, {
          headers: { authorization: 'Bearer key', 'content-type': 'text/plain' },
        }),
        415,
      ],
      [call('/v1/act', { url: `${site.url}/`, instruction: 'x'.repeat(5000) }, small), 413],
      [
        call('/v1/act', { url: `${site.url}/` }, base, { headers: { 'content-type': 'application/json' } }),
        401,
      ],
    ];
    for (const [pending, status] of cases) {
      const res = await pending;
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const json = await res.json();
      expect(typeof json.error.kind).toBe('string');
      expect(json.error.message.length).toBeGreaterThan(0);
    }
  });
});
