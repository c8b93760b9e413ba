import type { Stagehand } from '@browserbasehq/stagehand';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { cdpClient, type StagehandEnv, sdkFor, startStagehandEnv } from '../support/stagehand-env.ts';

/**
 * Probes of issue 21 against the Stagehand CDP proxy, two tenants on one server (loopback only):
 * one tenant's browser-wide auto-attach with waitForDebuggerOnStart must not pause the other's
 * pages, and the proxy reads URLs the way the browser does. Plus a bounded fuzz of the protocol's
 * inputs that must never answer 5xx.
 */

let env: StagehandEnv;
let a: Stagehand;
let b: Stagehand;

beforeAll(async () => {
  env = await startStagehandEnv();
  a = sdkFor('key-a');
  b = sdkFor('key-b');
  await Promise.all([a.init(), b.init()]);
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await env?.close();
});

/** The promise's value, or `timedOut` when a paused page never answers (the failure this probes). */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<'timedOut'>((r) => setTimeout(() => r('timedOut'), ms))]);

describe('CDP proxy between tenants', () => {
  it("a tenant's auto-attach with waitForDebuggerOnStart leaves the other tenant's new pages running", async () => {
    const cdp = await cdpClient(await env.connectUrlOf(a.browserbaseSessionID!, 'key-a'));
    try {
      const set = await cdp.send('Target.setAutoAttach', {
        autoAttach: true,
        waitForDebuggerOnStart: true,
        flatten: true,
      });
      expect(set.error).toBeUndefined();
      // Tenant b opens a page and loads one: with its target held by a's attach, neither answers.
      const opened = await within(
        (async () => {
          const page = await b.context.newPage();
          await page.goto(`${env.site.url}/login.html`);
          return page.evaluate(() => document.title);
        })(),
        20_000,
      );
      expect(opened).not.toBe('timedOut');
      expect(typeof opened).toBe('string');
      // a's own new page is still a's to release: it sees its attach, and only its own.
      const created = await cdp.send('Target.createTarget', { url: 'about:blank' });
      expect(created.error).toBeUndefined();
    } finally {
      cdp.close();
    }
  });

  it('refuses upper-case and space-led URLs to a host the guard refuses, as the browser would read them', async () => {
    const cdp = await cdpClient(await env.connectUrlOf(a.browserbaseSessionID!, 'key-a'));
    try {
      const targets = (await cdp.send('Target.getTargets')).result!.targetInfos as {
        targetId: string;
        type: string;
      }[];
      const page = targets.find((t) => t.type === 'page')!;
      const attached = await cdp.send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
      const sessionId = attached.result!.sessionId as string;
      // The cross origin is a loopback port the session's guard does not allow.
      const cross = new URL(env.site.crossOriginUrl);
      const hostile = [
        `HTTP://${cross.host}/login.html`,
        `  http://${cross.host}/login.html`,
        `\thttp://${cross.host}/login.html`,
        `HtTpS://${cross.host}/login.html`,
        `http:\\\\${cross.host}\\login.html`,
      ];
      for (const url of hostile) {
        const nav = await cdp.send('Page.navigate', { url }, sessionId);
        expect(nav.error?.message, url).toMatch(/^browserfn: Page\.navigate: .*(not allowed|refus|block)/i);
        const made = await cdp.send('Target.createTarget', { url });
        expect(made.error?.message, url).toMatch(/^browserfn: Target\.createTarget/);
      }
      // The allowed origin written the same ways still works: the rule is the browser's reading.
      const ok = await cdp.send(
        'Page.navigate',
        { url: ` HTTP://${new URL(env.site.url).host}/login.html` },
        sessionId,
      );
      expect(ok.error).toBeUndefined();
      expect(ok.result?.errorText).toBeUndefined();
    } finally {
      cdp.close();
    }
  });
});

describe('Stagehand protocol inputs, fuzzed', () => {
  it('answers 4xx, never 5xx, to hostile session ids, paths and bodies', async () => {
    const id = a.browserbaseSessionID!;
    const ids = ['x'.repeat(300), '..%2f..%2fetc%2fpasswd', '%00', `${id}%00`, '%2e%2e', 'ü'.repeat(50)];
    const bodies: unknown[] = [
      {},
      [],
      'null',
      { url: 'HTTP://10.0.0.1/' },
      { instruction: 'x'.repeat(10_000) },
      `{"schema":${nestedText(20_000)},"instruction":"read it"}`,
      { options: { timeout: -1 } },
      { frameId: { $ne: 1 } },
    ];
    // The model answers (an empty reading): a model failure is a 502 by design, not what is fuzzed here.
    env.llm.setHandler((req) =>
      req.schemaName === 'list_elements'
        ? { json: { elements: [] } }
        : { json: { data: { extraction: '' }, done: true } },
    );
    const seen: string[] = [];
    let calls = 0;
    for (const sid of ids)
      for (const op of ['start', 'act', 'extract', 'observe', 'navigate', 'end']) {
        const res = await env.call(`/v1/sessions/${sid}/${op}`, 'key-a', { method: 'POST', body: '{}' });
        calls++;
        if (res.status >= 500) seen.push(`${op} ${sid.slice(0, 30)} → ${res.status}`);
        await res.body?.cancel();
      }
    for (const body of bodies)
      for (const op of ['act', 'extract', 'observe', 'navigate']) {
        const res = await env.call(`/v1/sessions/${id}/${op}`, 'key-a', {
          method: 'POST',
          body: typeof body === 'string' ? body : JSON.stringify(body),
        });
        calls++;
        if (res.status >= 500)
          seen.push(
            `${op} ${JSON.stringify(body).slice(0, 40)} → ${res.status} ${(await res.text()).slice(0, 200)}`,
          );
        else await res.body?.cancel();
      }
    expect(calls).toBe(ids.length * 6 + bodies.length * 4);
    expect(seen).toEqual([]);
  });
});

/** A JSON Schema nested `depth` objects deep, as text (JSON.stringify itself overflows on it). */
function nestedText(depth: number): string {
  return `${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"string"}${'}}'.repeat(depth)}`;
}

describe('CDP frames, fuzzed', () => {
  it('answers or closes on malformed frames, and the other tenant keeps working', async () => {
    const frames = [
      'not json',
      '{"id":"x","method":"Target.getTargets"}',
      '{"id":1,"method":5}',
      '{"id":1,"method":"Target.setAutoAttach","params":[]}',
      '{"id":1,"method":"Page.navigate","sessionId":{}}',
      `{"id":1,"method":"${'A'.repeat(10_000)}"}`,
      '{"id":1,"method":"Target.attachToTarget","params":{"targetId":{"$gt":""},"flatten":true}}',
      '{"id":1,"method":"Page.navigate","params":{"url":"HTTP://169.254.169.254/"},"sessionId":"nope"}',
    ];
    const url = await env.connectUrlOf(a.browserbaseSessionID!, 'key-a');
    const outcomes: string[] = [];
    for (const frame of frames) {
      const ws = new WebSocket(url);
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      const outcome = await new Promise<string>((resolve) => {
        ws.once('message', (d) => resolve(JSON.parse(d.toString()).error ? 'error' : 'result'));
        ws.once('close', () => resolve('closed'));
        ws.send(frame);
      });
      outcomes.push(outcome);
      ws.close();
    }
    // Every frame got an answer: a CDP error, or the connection closed (a frame that is not JSON).
    expect(outcomes).toEqual(['closed', ...frames.slice(1).map(() => 'error')]);
    const page = b.context.pages()[0]!;
    await page.goto(`${env.site.url}/login.html`);
    expect(await page.evaluate(() => document.title)).toBeTruthy();
  });
});

describe('a 20,000-deep extract schema', () => {
  it('is a 400 naming the schema, not a stack overflow', async () => {
    const res = await env.call(`/v1/sessions/${a.browserbaseSessionID!}/extract`, 'key-a', {
      method: 'POST',
      body: `{"schema":${nestedText(20_000)},"instruction":"read it"}`,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/schema: nested deeper than 64 levels/);
  });
});
