import { Stagehand } from '@browserbasehq/stagehand';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connectDebuggableBrowser, launchDebuggableBrowser } from '../../lib/api/stagehand/browser.ts';
import { createStagehandService } from '../../lib/api/stagehand/index.ts';
import {
  cdpClient,
  listen,
  pageIdsOf,
  type StagehandEnv,
  sdkFor,
  startStagehandEnv,
} from '../support/stagehand-env.ts';

/**
 * What keeps Stagehand sessions apart on one browserfn server: tenant keys, the CDP proxy's
 * token and filter, the network guard, per-tenant limits and the idle timeout.
 */

let env: StagehandEnv;
let a: Stagehand;
let b: Stagehand;

beforeAll(async () => {
  env = await startStagehandEnv();
  a = sdkFor('key-a');
  b = sdkFor('key-b');
  await Promise.all([a.init(), b.init()]);
  await a.context.pages()[0]!.goto(`${env.site.url}/login.html`);
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await env?.close();
});

describe('sessions of several tenants on one server', () => {
  it('a raw CDP client sees only its session and cannot escape it', async () => {
    const cdp = await cdpClient(await env.connectUrlOf(a.browserbaseSessionID!, 'key-a'));
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
        `${env.site.crossOriginUrl}/login.html?probe=cdp`,
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
        { expression: `location.href = '${env.site.crossOriginUrl}/login.html?probe=script'` },
        sessionId,
      );
      await page.waitForLoadState('domcontentloaded');
      await new Promise((r) => setTimeout(r, 300));
      expect(await page.evaluate(() => document.body.textContent)).toMatch(/browserfn network guard/);
      expect(env.site.hits.filter((h) => h.includes('probe='))).toEqual([]);
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
        env.service.registry.get(a.browserbaseSessionID!, 'tenant-a')!.resources.contextId,
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
    expect((await env.call(`/v1/sessions/${id}`, 'key-b')).status).toBe(404);
    const act = await env.call(`/v1/sessions/${id}/act`, 'key-b', {
      method: 'POST',
      headers: { 'x-stream-response': 'true' },
      body: JSON.stringify({ input: 'click Sign in' }),
    });
    expect(act.status).toBe(404);
    expect((await env.call(`/v1/sessions/${id}/end`, 'key-b', { method: 'POST' })).status).toBe(404);
    expect((await env.call(`/v1/sessions/${id}/replay`, 'key-b')).status).toBe(404);
    expect(env.service.registry.get(id, 'tenant-a')).toBeDefined();

    const urlA = await env.connectUrlOf(id, 'key-a');
    const urlB = await env.connectUrlOf(b.browserbaseSessionID!, 'key-b');
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
    const res = await env.call(`/v1/sessions/${b.browserbaseSessionID}/observe`, 'key-b', {
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
    const res = await env.call(`/v1/sessions/${id}/observe`, 'key-b', { method: 'POST', body: '{}' });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { success: boolean; data: { result: unknown[] } };
    expect(json.success).toBe(true);
    expect(Array.isArray(json.data.result)).toBe(true);
    const agent = await env.call(`/v1/sessions/${id}/agentExecute`, 'key-b', {
      method: 'POST',
      body: JSON.stringify({ agentConfig: {}, executeOptions: { instruction: 'sign in' } }),
    });
    // The session's model (from its start) drives the agent; the answer is the SDK's AgentResult.
    expect(agent.status).toBe(200);
    const outcome = (await agent.json()) as { data: { result: { completed: boolean; usage: object } } };
    expect(typeof outcome.data.result.completed).toBe('boolean');
    expect(outcome.data.result.usage).toHaveProperty('input_tokens');
  });

  it('answers 401 to an unknown key and 400 naming a bad field', async () => {
    const res = await env.call('/v1/sessions/start', 'not-a-key', { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    const bad = await env.call(`/v1/sessions/${b.browserbaseSessionID}/navigate`, 'key-b', {
      method: 'POST',
      body: JSON.stringify({ url: `${env.site.url}/`, options: { waitUntil: 'whenever' } }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(
      /^options\.waitUntil/,
    );
    const model = await env.call('/v1/sessions/start', 'key-c', {
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
    const start = () =>
      env.call('/v1/sessions/start', 'key-c', { method: 'POST', body: '{"modelName":"auto"}' });
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
      expect((await env.call(`/v1/sessions/${id}/end`, 'key-c', { method: 'POST' })).status).toBe(200);
    const again = await start();
    expect(again.status).toBe(200);
    const last = ((await again.json()) as { data: { sessionId: string } }).data.sessionId;
    await env.call(`/v1/sessions/${last}/end`, 'key-c', { method: 'POST' });
  });
});

describe('idle sessions', () => {
  it('are ended after the idle timeout, their CDP sockets closed and contexts freed', async () => {
    const keys = new Map([['key-idle', 'tenant-idle']]);
    const policy = { allowPrivate: false, allowHosts: [] };
    const idle = createStagehandService({
      keys,
      policy,
      debuggableBrowser: async () => env.dbg,
      idleMs: 1_000,
    });
    const { srv, url } = await listen(idle, keys, {}, env.site.port);
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
      expect(env.dbg.browser.contexts()).not.toContain(context);
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
    const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${env.site.port}`] };
    const svc = createStagehandService({ keys, policy, debuggableBrowser: async () => remote });
    const { srv, url } = await listen(svc, keys, {}, env.site.port);
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
      await page.goto(`${env.site.url}/login.html`);
      expect((await sh.act('check remember me')).success).toBe(true);
      expect(
        await page.evaluate(() => (document.querySelector('[name=remember]') as HTMLInputElement).checked),
      ).toBe(true);
      await expect(page.goto(`${env.site.crossOriginUrl}/login.html?probe=remote-goto`)).rejects.toThrow(
        /Blocked request/,
      );
      // A load the page starts itself is stopped by the route before it leaves the browser.
      await page.evaluate((u) => {
        location.href = u;
      }, `${env.site.crossOriginUrl}/login.html?probe=remote-script`);
      await new Promise((r) => setTimeout(r, 500));
      expect(env.site.hits.filter((h) => h.includes('probe=remote'))).toEqual([]);
    } finally {
      await sh.close();
      process.env.STAGEHAND_API_URL = saved[0];
      process.env.BROWSERBASE_BASE_URL = saved[1];
      await svc.close();
      srv.close();
      await remote.browser.close();
      await far.browser.close();
    }
  });
});
