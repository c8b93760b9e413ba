import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { Stagehand } from '@browserbasehq/stagehand';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { createApp } from '../../lib/api/app.ts';
import {
  connectDebuggableBrowser,
  type DebuggableBrowser,
  launchDebuggableBrowser,
} from '../../lib/api/stagehand/browser.ts';
import { createStagehandService, type StagehandService } from '../../lib/api/stagehand/index.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';

/**
 * The official Stagehand v3 SDK, unchanged, pointed at browserfn with the two environment
 * variables and a browserfn key in place of a Browserbase key.
 */

let site: FixtureServer;
let llm: ScriptedModel;
let dbg: DebuggableBrowser;
let service: StagehandService;
let server: ReturnType<typeof serve>;
let base: string;
let a: Stagehand;
let b: Stagehand;
const savedEnv = { api: process.env.STAGEHAND_API_URL, bb: process.env.BROWSERBASE_BASE_URL };
const SECRET = 'hunter2-never-to-a-model';

const sdk = (apiKey: string) =>
  new Stagehand({
    env: 'BROWSERBASE',
    apiKey,
    model: { modelName: 'openai/gpt-4.1-mini', apiKey: 'sk-test' },
    verbose: 0,
    disablePino: true,
    logger: () => {},
  });

/** Serves a Stagehand service the way `npm start` does: the hono app plus the CDP upgrade. */
async function listen(svc: StagehandService, keys: Map<string, string>, env: Record<string, string> = {}) {
  const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] };
  const app = createApp({ keys, policy, env, stagehand: svc });
  const srv = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  srv.on('upgrade', (req, socket, head) => {
    if (!svc.handleUpgrade(req, socket, head)) socket.destroy();
  });
  return { srv, url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}${svc.prefix}` };
}

beforeAll(async () => {
  [site, llm, dbg] = await Promise.all([
    startFixtureServer(),
    startScriptedModel(),
    launchDebuggableBrowser(),
  ]);
  const keys = new Map([
    ['key-a', 'tenant-a'],
    ['key-b', 'tenant-b'],
    ['key-c', 'tenant-c'],
  ]);
  const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] };
  // The server holds no model key of its own: the SDK's x-model-api-key decides.
  const env = { OPENAI_BASE_URL: llm.openaiBaseURL, BROWSERFN_MODEL_MAX_RETRIES: '0' };
  service = createStagehandService({
    keys,
    policy,
    env,
    debuggableBrowser: async () => dbg,
    maxSessionsPerTenant: 2,
  });
  ({ srv: server, url: base } = await listen(service, keys, env));
  process.env.STAGEHAND_API_URL = base;
  process.env.BROWSERBASE_BASE_URL = base;
  a = sdk('key-a');
  b = sdk('key-b');
  await Promise.all([a.init(), b.init()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await service?.close();
  server?.close();
  await closeGuardProxies();
  await dbg?.browser.close();
  await site?.close();
  await llm?.close();
  process.env.STAGEHAND_API_URL = savedEnv.api;
  process.env.BROWSERBASE_BASE_URL = savedEnv.bb;
  if (savedEnv.api === undefined) delete process.env.STAGEHAND_API_URL;
  if (savedEnv.bb === undefined) delete process.env.BROWSERBASE_BASE_URL;
});

const call = (path: string, key: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { 'x-bb-api-key': key, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });

/** A raw CDP client: what any tool handed the session's connectUrl can send. */
async function cdpClient(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let id = 0;
  const waiting = new Map<
    number,
    (m: { result?: Record<string, unknown>; error?: { message: string } }) => void
  >();
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (typeof m.id === 'number') waiting.get(m.id)?.(m);
  });
  return {
    send(method: string, params: Record<string, unknown> = {}, sessionId?: string) {
      const n = ++id;
      ws.send(JSON.stringify({ id: n, method, params, ...(sessionId ? { sessionId } : {}) }));
      return new Promise<{ result?: Record<string, unknown>; error?: { message: string } }>((r) =>
        waiting.set(n, r),
      );
    },
    close: () => ws.close(),
  };
}

const connectUrlOf = async (id: string, key: string) =>
  ((await (await call(`/v1/sessions/${id}`, key)).json()) as { connectUrl: string }).connectUrl;

const pageIdsOf = (s: Stagehand) => s.context.pages().map((p) => p.mainFrameId());

describe('the Stagehand SDK on browserfn', () => {
  it('init opens a session whose CDP URL is browserfn’s authenticated proxy', async () => {
    expect(service.registry.size()).toBe(2);
    const connectUrl = await connectUrlOf(a.browserbaseSessionID!, 'key-a');
    expect(connectUrl).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:\\d+${service.prefix}/cdp/`));
    expect(connectUrl).toMatch(/token=[\w-]{40,}/);
    expect(connectUrl).not.toContain(new URL(dbg.wsEndpoint).port);
    expect(a.context.pages().length).toBe(1);
  });

  it('page.goto loads a fixture, and the page is reachable over the proxied CDP socket', async () => {
    const page = a.context.pages()[0]!;
    const response = await page.goto(`${site.url}/login.html`);
    expect(response?.status()).toBe(200);
    // evaluate runs over the SDK's own CDP connection, through the proxy.
    expect(await page.evaluate(() => document.querySelector('h1')?.textContent)).toBe('Sign in to Acme');
  });

  it('act with a plain instruction resolves with zero tokens, as stagehand.metrics shows', async () => {
    const before = await a.metrics;
    const asked = llm.requests.length;
    const result = await a.act('type "ada@acme.test" into the Email field');
    expect(result.success).toBe(true);
    expect(result.actions[0]?.method).toBe('fill');
    expect(llm.requests.length).toBe(asked);
    const page = a.context.pages()[0]!;
    expect(await page.evaluate(() => (document.getElementById('email') as HTMLInputElement).value)).toBe(
      'ada@acme.test',
    );
    const after = await a.metrics;
    expect(after.actPromptTokens).toBe(before.actPromptTokens);
  });

  it('act through the model keeps a secret variable away from it', async () => {
    llm.setHandler((r) => ({
      json: {
        elementId: idInPrompt(r.text, 'textbox', 'Password'),
        method: 'fill',
        arguments: ['%pw%'],
        twoStep: false,
        reason: 'the password box',
      },
    }));
    const asked = llm.requests.length;
    const result = await a.act('put the secret %pw% where the password goes', { variables: { pw: SECRET } });
    expect(result.success).toBe(true);
    expect(llm.requests.length).toBe(asked + 1);
    expect(llm.requests.at(-1)?.headers.authorization).toBe('Bearer sk-test');
    expect(JSON.stringify(llm.requests)).not.toContain(SECRET);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    const page = a.context.pages()[0]!;
    expect(await page.evaluate(() => (document.getElementById('password') as HTMLInputElement).value)).toBe(
      SECRET,
    );
  });

  it('observe returns actions that act replays with no model call', async () => {
    llm.setHandler((r) => ({
      json: {
        elements: [
          {
            elementId: idInPrompt(r.text, 'button', 'Sign in'),
            description: 'the Sign in button',
            method: 'click',
            arguments: [],
          },
        ],
      },
    }));
    const found = await a.observe('the button that signs in');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ description: 'the Sign in button', method: 'click' });
    expect(found[0]!.selector).toMatch(/^xpath=\//);
    const asked = llm.requests.length;
    const result = await a.act(found[0]!);
    expect(result.success).toBe(true);
    expect(llm.requests.length).toBe(asked);
    const page = a.context.pages()[0]!;
    expect(await page.evaluate(() => document.getElementById('status')?.textContent)).toBe(
      'Signed in as ada@acme.test',
    );
  });

  it('extract returns data in the shape of a zod schema', async () => {
    llm.setHandler(() => ({ json: { data: { heading: 'Sign in to Acme', links: 3 }, done: true } }));
    const data = await a.extract(
      'the page heading and how many nav links there are',
      z.object({
        heading: z.string(),
        links: z.number(),
      }),
    );
    expect(data).toEqual({ heading: 'Sign in to Acme', links: 3 });
    expect(llm.requests.at(-1)?.schemaName).toBe('extracted');
  });

  it('works on the page the SDK names when several are open', async () => {
    const second = await a.context.newPage();
    try {
      await second.goto(`${site.url}/products.html`);
      const onSecond = await a.observe({ page: second });
      const names = onSecond.map((o) => o.description).join('\n');
      expect(names).toMatch(/combobox "Sort by"/);
      expect(names).not.toMatch(/button "Sign in"/);
      const text = (await a.extract({ page: a.context.pages()[0]! })) as { pageText: string };
      expect(text.pageText).toContain('Sign in to Acme');
    } finally {
      await second.close();
    }
  });

  it('stagehand.metrics adds up the model calls per operation', async () => {
    const m = await a.metrics;
    expect(m.actPromptTokens).toBeGreaterThan(100);
    expect(m.observePromptTokens).toBeGreaterThan(100);
    expect(m.extractPromptTokens).toBeGreaterThan(100);
    expect(m.actCompletionTokens).toBeGreaterThan(0);
    expect(m.totalPromptTokens).toBe(
      m.actPromptTokens + m.observePromptTokens + m.extractPromptTokens + m.agentPromptTokens,
    );
    // b made no call at all.
    expect((await b.metrics).totalPromptTokens).toBe(0);
  });

  it('agent().execute() fails with a clear not-implemented error, never a fake success', async () => {
    await expect(a.agent().execute('sign in and report the status line')).rejects.toThrow(/not available/);
  });

  it('refuses a guarded URL through goto', async () => {
    const page = a.context.pages()[0]!;
    const before = page.url();
    // Loopback, but not on the allow-list: the fixture server's second origin, which logs every hit.
    await expect(page.goto(`${site.crossOriginUrl}/login.html?probe=goto`)).rejects.toThrow(
      /Blocked request/,
    );
    expect(await page.evaluate(() => location.href)).toBe(before);
    expect(site.hits.filter((h) => h.includes('probe='))).toEqual([]);
  });

  it('a raw CDP client sees only its session and cannot escape it', async () => {
    const cdp = await cdpClient(await connectUrlOf(a.browserbaseSessionID!, 'key-a'));
    try {
      const targets = (await cdp.send('Target.getTargets')).result!.targetInfos as { targetId: string }[];
      const ids = targets.map((t) => t.targetId).sort();
      expect(ids).toEqual(pageIdsOf(a).sort());
      for (const other of pageIdsOf(b)) {
        expect(
          (await cdp.send('Target.attachToTarget', { targetId: other, flatten: true })).error?.message,
        ).toMatch(/not in this session's context/);
      }
      const attached = await cdp.send('Target.attachToTarget', { targetId: ids[0], flatten: true });
      const sessionId = attached.result!.sessionId as string;
      const page = a.context.pages()[0]!;
      const at = page.url();
      for (const url of [
        `${site.crossOriginUrl}/login.html?probe=cdp`,
        'file:///etc/passwd',
        'chrome://version',
        'about:settings',
      ]) {
        const res = await cdp.send('Page.navigate', { url }, sessionId);
        expect(res.error?.message, url).toMatch(/browserfn: .*(Blocked request|not a web URL)/);
      }
      expect(await page.evaluate(() => location.href)).toBe(at);
      // A load the page itself starts goes through the guard proxy: the loopback server never sees it.
      await cdp.send(
        'Runtime.evaluate',
        { expression: `location.href = '${site.crossOriginUrl}/login.html?probe=script'` },
        sessionId,
      );
      await page.waitForLoadState('domcontentloaded');
      await new Promise((r) => setTimeout(r, 300));
      expect(await page.evaluate(() => document.body.textContent)).toMatch(/browserfn network guard/);
      expect(site.hits.filter((h) => h.includes('probe='))).toEqual([]);
      for (const [method, params] of [
        ['Target.createBrowserContext', {}],
        ['Browser.grantPermissions', { permissions: ['geolocation'] }],
        ['Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp' }],
        ['Target.attachToBrowserTarget', {}],
        ['Tracing.start', {}],
      ] as const) {
        expect((await cdp.send(method, params)).error?.message, method).toMatch(/^browserfn: /);
      }
      expect(
        (await cdp.send('DOM.setFileInputFiles', { files: ['/etc/passwd'], backendNodeId: 1 }, sessionId))
          .error?.message,
      ).toMatch(/^browserfn: /);
      // A page it opens lands in its own context, behind the guard.
      const created = await cdp.send('Target.createTarget', { url: 'about:blank' });
      const newId = created.result!.targetId as string;
      const contexts = await cdp.send('Target.getBrowserContexts');
      expect(contexts.result!.browserContextIds).toEqual([
        service.registry.get(a.browserbaseSessionID!, 'tenant-a')!.resources.contextId,
      ]);
      const info = await cdp.send('Target.getTargetInfo', { targetId: newId });
      expect((info.result!.targetInfo as { browserContextId: string }).browserContextId).toBe(
        (contexts.result!.browserContextIds as string[])[0],
      );
      expect((await cdp.send('Target.closeTarget', { targetId: newId })).result).toBeDefined();
    } finally {
      cdp.close();
    }
  });

  it('a second tenant cannot reach the first one’s session or CDP socket', async () => {
    const id = a.browserbaseSessionID!;
    expect((await call(`/v1/sessions/${id}`, 'key-b')).status).toBe(404);
    const act = await call(`/v1/sessions/${id}/act`, 'key-b', {
      method: 'POST',
      headers: { 'x-stream-response': 'true' },
      body: JSON.stringify({ input: 'click Sign in' }),
    });
    expect(act.status).toBe(404);
    expect((await call(`/v1/sessions/${id}/end`, 'key-b', { method: 'POST' })).status).toBe(404);
    expect((await call(`/v1/sessions/${id}/replay`, 'key-b')).status).toBe(404);
    expect(service.registry.get(id, 'tenant-a')).toBeDefined();

    const urlA = await connectUrlOf(id, 'key-a');
    const urlB = await connectUrlOf(b.browserbaseSessionID!, 'key-b');
    const tokenB = new URL(urlB).searchParams.get('token')!;
    const forged = new URL(urlA);
    forged.searchParams.set('token', tokenB);
    await expect(cdpClient(forged.toString())).rejects.toThrow(/404/);
    await expect(cdpClient(urlA, { 'x-bb-api-key': 'key-b' })).rejects.toThrow(/404/);
    // B's own socket shows none of A's pages.
    const cdp = await cdpClient(urlB);
    const targets = (await cdp.send('Target.getTargets')).result!.targetInfos as { targetId: string }[];
    cdp.close();
    expect(targets.map((t) => t.targetId).sort()).toEqual(pageIdsOf(b).sort());
    for (const pageA of pageIdsOf(a)) expect(targets.map((t) => t.targetId)).not.toContain(pageA);
  });

  it('streams data: events only, ending in one finished event', async () => {
    const res = await call(`/v1/sessions/${b.browserbaseSessionID}/observe`, 'key-b', {
      method: 'POST',
      headers: { 'x-stream-response': 'true' },
      body: JSON.stringify({}),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const chunks = (await res.text()).split('\n\n').filter(Boolean);
    for (const c of chunks) expect(c.startsWith('data: ')).toBe(true);
    const events = chunks.map((c) => JSON.parse(c.slice(6)));
    const done = events.filter((e) => e.type === 'system' && ['finished', 'error'].includes(e.data.status));
    expect(done).toHaveLength(1);
    expect(done[0].data.status).toBe('finished');
    expect(Array.isArray(done[0].data.result)).toBe(true);
  });

  it('answers plain JSON to a client that does not ask for a stream', async () => {
    const id = b.browserbaseSessionID;
    const res = await call(`/v1/sessions/${id}/observe`, 'key-b', { method: 'POST', body: '{}' });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { success: boolean; data: { result: unknown[] } };
    expect(json.success).toBe(true);
    expect(Array.isArray(json.data.result)).toBe(true);
    const agent = await call(`/v1/sessions/${id}/agentExecute`, 'key-b', {
      method: 'POST',
      body: JSON.stringify({ agentConfig: {}, executeOptions: { instruction: 'sign in' } }),
    });
    expect(agent.status).toBe(501);
    expect(((await agent.json()) as { error: { kind: string } }).error.kind).toBe('not_implemented');
  });

  it('answers 401 to an unknown key and 400 naming a bad field', async () => {
    const res = await call('/v1/sessions/start', 'not-a-key', { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    const bad = await call(`/v1/sessions/${b.browserbaseSessionID}/navigate`, 'key-b', {
      method: 'POST',
      body: JSON.stringify({ url: `${site.url}/`, options: { waitUntil: 'whenever' } }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(
      /^options\.waitUntil/,
    );
    const model = await call('/v1/sessions/start', 'key-c', {
      method: 'POST',
      headers: { 'x-model-api-key': 'some-key' },
      body: JSON.stringify({ modelName: 'google/gemini-2.5-flash' }),
    });
    expect(model.status).toBe(400);
    expect(((await model.json()) as { error: { message: string } }).error.message).toMatch(
      /^modelName: .*provider/,
    );
  });

  it('limits open sessions per tenant with a clear error', async () => {
    const start = () => call('/v1/sessions/start', 'key-c', { method: 'POST', body: '{"modelName":"auto"}' });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await start();
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { data: { sessionId: string } }).data.sessionId);
    }
    const over = await start();
    expect(over.status).toBe(429);
    const body = (await over.json()) as { error: { kind: string; message: string } };
    expect(body.error.kind).toBe('limit');
    expect(body.error.message).toMatch(/2 open Stagehand sessions/);
    for (const id of ids)
      expect((await call(`/v1/sessions/${id}/end`, 'key-c', { method: 'POST' })).status).toBe(200);
    const again = await start();
    expect(again.status).toBe(200);
    const last = ((await again.json()) as { data: { sessionId: string } }).data.sessionId;
    await call(`/v1/sessions/${last}/end`, 'key-c', { method: 'POST' });
  });

  it('the release call from a killed client frees its session', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/scripts/stagehand-client.ts'], {
      env: { ...process.env, BFN_TEST_KEY: 'key-b' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const id = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /session (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`client exited early (${code})`)));
    });
    expect((await call(`/v1/sessions/${id}`, 'key-b')).status).toBe(200);
    child.kill('SIGKILL');
    let status = 200;
    for (let i = 0; i < 300 && status === 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await call(`/v1/sessions/${id}`, 'key-b')).status;
    }
    expect(status).toBe(404);
  }, 60_000);

  it('disableAPI: a Browserbase-style session runs the SDK’s own pipeline over the proxied socket', async () => {
    // Every CDP command of Stagehand's local snapshot and click goes through the filter here.
    llm.setHandler((r) => ({
      json: {
        elements: [
          {
            elementId: /\[(\d+-\d+)\] button: Sign in/.exec(r.text)?.[1] ?? 'none',
            description: 'Sign in',
            method: 'click',
            arguments: [],
          },
        ],
      },
    }));
    const local = new Stagehand({
      env: 'BROWSERBASE',
      apiKey: 'key-c',
      disableAPI: true,
      model: { modelName: 'gpt-4.1-mini', apiKey: 'sk-test', baseURL: llm.openaiBaseURL },
      verbose: 0,
      disablePino: true,
      logger: () => {},
    });
    await local.init();
    try {
      expect(service.registry.get(local.browserbaseSessionID!, 'tenant-c')).toBeDefined();
      const page = local.context.pages()[0]!;
      await page.goto(`${site.url}/login.html`);
      const found = await local.observe('the sign in button');
      expect(found[0]?.description).toBe('Sign in');
      expect(llm.requests.at(-1)?.schemaName).toBe('Observation');
      // Its own CDP navigation is guarded too.
      await expect(page.goto(`${site.crossOriginUrl}/login.html?probe=local`)).rejects.toThrow(
        /Blocked request/,
      );
    } finally {
      await local.close();
    }
  });

  it('close ends the session and frees its context', async () => {
    const id = a.browserbaseSessionID!;
    const { context } = service.registry.get(id, 'tenant-a')!.resources;
    await a.close();
    expect((await call(`/v1/sessions/${id}`, 'key-a')).status).toBe(404);
    expect(dbg.browser.contexts()).not.toContain(context);
  });
});

describe('idle sessions', () => {
  it('are ended after the idle timeout, their CDP sockets closed and contexts freed', async () => {
    const keys = new Map([['key-idle', 'tenant-idle']]);
    const policy = { allowPrivate: false, allowHosts: [] };
    const idle = createStagehandService({ keys, policy, debuggableBrowser: async () => dbg, idleMs: 1_000 });
    const { srv, url } = await listen(idle, keys);
    try {
      const headers = { 'x-bb-api-key': 'key-idle', 'content-type': 'application/json' };
      const started = (await (
        await fetch(`${url}/v1/sessions/start`, { method: 'POST', headers, body: '{"modelName":"auto"}' })
      ).json()) as { data: { sessionId: string; cdpUrl: string } };
      const { context } = idle.registry.get(started.data.sessionId, 'tenant-idle')!.resources;
      const contextClosed = new Promise((r) => context.once('close', r));
      const ws = new WebSocket(started.data.cdpUrl);
      await new Promise((r) => ws.once('open', r));
      const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
      expect(await closed).toBe(1000);
      const res = await fetch(`${url}/v1/sessions/${started.data.sessionId}`, { headers });
      expect(res.status).toBe(404);
      await contextClosed;
      expect(dbg.browser.contexts()).not.toContain(context);
    } finally {
      await idle.close();
      srv.close();
    }
  });
});

describe('a remote CDP browser', () => {
  it('hosts sessions too, each page load checked by the request-level guard', async () => {
    // Another Chromium with a debugging port plays the remote browser (Browserbase, Steel, …).
    const far = await launchDebuggableBrowser();
    const remote = await connectDebuggableBrowser(far.wsEndpoint);
    const keys = new Map([['key-r', 'tenant-r']]);
    const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] };
    const svc = createStagehandService({ keys, policy, debuggableBrowser: async () => remote });
    const { srv, url } = await listen(svc, keys);
    const saved = [process.env.STAGEHAND_API_URL, process.env.BROWSERBASE_BASE_URL];
    process.env.STAGEHAND_API_URL = url;
    process.env.BROWSERBASE_BASE_URL = url;
    const sh = new Stagehand({
      env: 'BROWSERBASE',
      apiKey: 'key-r',
      model: 'auto',
      verbose: 0,
      disablePino: true,
      logger: () => {},
    });
    try {
      await sh.init();
      const page = sh.context.pages()[0]!;
      await page.goto(`${site.url}/login.html`);
      expect((await sh.act('check remember me')).success).toBe(true);
      expect(
        await page.evaluate(() => (document.querySelector('[name=remember]') as HTMLInputElement).checked),
      ).toBe(true);
      await expect(page.goto(`${site.crossOriginUrl}/login.html?probe=remote-goto`)).rejects.toThrow(
        /Blocked request/,
      );
      // A load the page starts itself is stopped by the route before it leaves the browser.
      await page.evaluate((u) => {
        location.href = u;
      }, `${site.crossOriginUrl}/login.html?probe=remote-script`);
      await new Promise((r) => setTimeout(r, 500));
      expect(site.hits.filter((h) => h.includes('probe=remote'))).toEqual([]);
    } finally {
      await sh.close();
      process.env.STAGEHAND_API_URL = saved[0];
      process.env.BROWSERBASE_BASE_URL = saved[1];
      await svc.close();
      srv.close();
      await remote.browser.close();
      await far.browser.close();
    }
  }, 60_000);
});
